variable "chart_path" {
  description = "Local path of the Model Fleet chart; null means this repository's charts/model-fleet-operator."
  type        = string
  default     = null
  nullable    = true
}

variable "release_name" {
  description = "Helm release name."
  type        = string
  default     = "model-fleet"
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$", var.release_name))
    error_message = "release_name must be lower-case letters, digits and '-', at most 53 characters (a Helm release name)."
  }
}

variable "namespace" {
  description = "Namespace of the operator (created when missing)."
  type        = string
  default     = "model-fleet-system"
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.namespace))
    error_message = "namespace must be a DNS label, e.g. \"model-fleet-system\"."
  }
}

variable "profile" {
  description = "Platform profile of the chart: kind, microk8s, eks or gke."
  type        = string
  validation {
    condition     = contains(["kind", "microk8s", "eks", "gke"], var.profile)
    error_message = "profile must be one of kind, microk8s, eks, gke."
  }
}

variable "image_repository" {
  description = "Operator image repository (e.g. ghcr.io/acme/model-fleet-operator); null keeps the chart's default."
  type        = string
  default     = null
  nullable    = true
  validation {
    condition     = var.image_repository == null || can(regex("^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$", var.image_repository))
    error_message = "image_repository must be an image name without tag or digest, e.g. \"ghcr.io/acme/model-fleet-operator\" (lower case)."
  }
}

variable "image_tag" {
  description = "Operator image tag; null keeps the chart's default (its appVersion)."
  type        = string
  default     = null
  nullable    = true
  validation {
    condition     = var.image_tag == null || can(regex("^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$", var.image_tag))
    error_message = "image_tag must be a tag such as \"0.1.0\": letters, digits, '_', '.', '-', at most 128 characters, not starting with '.' or '-'."
  }
}

variable "gateway" {
  description = "The shared Gateway the chart creates and InferenceService routes attach to (the operator's --default-gateway)."
  type = object({
    create     = bool
    name       = string
    namespace  = string
    class_name = string
  })
  default = {
    create     = true
    name       = "shared"
    namespace  = "model-fleet-system"
    class_name = "cilium"
  }
  validation {
    condition = alltrue([
      for v in [var.gateway.name, var.gateway.namespace] : can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", v))
    ]) && can(regex("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", var.gateway.class_name))
    error_message = "gateway.name and gateway.namespace must be DNS labels and gateway.class_name a DNS subdomain, e.g. { name = \"shared\", namespace = \"model-fleet-system\", class_name = \"cilium\" }."
  }
}

variable "values" {
  description = "Extra chart values (an object), merged over the module's (top-level keys replace), e.g. slack settings."
  type        = any
  default     = {}
}

variable "timeout_seconds" {
  description = "How long Helm waits for the operator to be ready."
  type        = number
  default     = 300
  validation {
    condition     = var.timeout_seconds >= 30 && var.timeout_seconds <= 3600
    error_message = "timeout_seconds must be between 30 and 3600."
  }
}

variable "manage_crds" {
  description = "Apply the chart's CRDs (crds/*.yaml) with Terraform, server-side, so apply upgrades them and destroy removes them (with every custom resource); false leaves them to Helm, which installs them once and never upgrades or deletes them."
  type        = bool
  default     = true
}

variable "http_add_on" {
  description = "Wake from zero on HTTP requests (scaling.http) through the KEDA HTTP add-on, which must be installed (modules/keda's http_add_on; its output of the same name fits here): the chart's httpAddOn values, which give the operator its --http-* flags and a Role for its ReferenceGrants in the add-on's namespace. scaler_address null means keda-add-ons-http-external-scaler.<namespace>:9090."
  type = object({
    enabled             = optional(bool, false)
    namespace           = optional(string, "keda")
    interceptor_service = optional(string, "keda-add-ons-http-interceptor-proxy")
    interceptor_port    = optional(number, 8080)
    scaler_address      = optional(string)
  })
  default  = { enabled = false }
  nullable = false
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.http_add_on.namespace)) && can(regex("^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$", var.http_add_on.interceptor_service))
    error_message = "http_add_on.namespace must be a DNS label and http_add_on.interceptor_service a Service name (DNS-1035 label), e.g. { namespace = \"keda\", interceptor_service = \"keda-add-ons-http-interceptor-proxy\" }."
  }
  validation {
    condition     = floor(var.http_add_on.interceptor_port) == var.http_add_on.interceptor_port && var.http_add_on.interceptor_port >= 1 && var.http_add_on.interceptor_port <= 65535
    error_message = "http_add_on.interceptor_port must be a TCP port, 1..65535 (the add-on chart's interceptor.proxy.port, default 8080)."
  }
  validation {
    condition     = var.http_add_on.scaler_address == null || can(regex("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?:[0-9]{1,5}$", coalesce(var.http_add_on.scaler_address, "-")))
    error_message = "http_add_on.scaler_address must be host:port of the add-on's external scaler, e.g. \"keda-add-ons-http-external-scaler.keda:9090\", or null for that default."
  }
}
