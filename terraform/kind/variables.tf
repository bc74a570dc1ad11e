variable "cluster_name" {
  description = "kind cluster name (its kube context is kind-<name>, its nodes <name>-control-plane and <name>-worker)."
  type        = string
  default     = "model-fleet"
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$", var.cluster_name))
    error_message = "cluster_name must be lower-case letters, digits and '-', at most 32 characters."
  }
}

variable "kind_bin" {
  description = "Path of the kind CLI (make kind-up builds it from the Go module proxy)."
  type        = string
  validation {
    condition     = startswith(var.kind_bin, "/")
    error_message = "kind_bin must be an absolute path to the kind CLI (make kind-up passes it)."
  }
}

variable "kubeconfig_path" {
  description = "Where kind writes the cluster's kubeconfig (absolute; make kind-up uses .local/kind/kubeconfig)."
  type        = string
  validation {
    condition     = startswith(var.kubeconfig_path, "/")
    error_message = "kubeconfig_path must be absolute."
  }
}

variable "node_image" {
  description = "kindest/node image; null means the kind CLI's default for its version."
  type        = string
  default     = null
  nullable    = true
  validation {
    condition     = var.node_image == null || can(regex("^[^\\s]+:[^\\s]+$", var.node_image))
    error_message = "node_image must be an image reference with a tag, e.g. \"kindest/node:v1.35.0\"."
  }
}

variable "host_port" {
  description = "Loopback port on the host mapped to the Gateway's port 80 (curl -H 'Host: model.localhost' http://127.0.0.1:<host_port>/)."
  type        = number
  default     = 8080
  validation {
    condition     = var.host_port >= 1024 && var.host_port <= 65535
    error_message = "host_port must be an unprivileged TCP port, 1024..65535."
  }
}

variable "gateway_api_crds_dir" {
  description = "Folder with the Gateway API v1.4.1 standard-channel CRD files (make kind-up fetches them)."
  type        = string
}

variable "chart_path" {
  description = "Local path of the Model Fleet chart; null means this repository's charts/model-fleet-operator."
  type        = string
  default     = null
  nullable    = true
}

variable "image_repository" {
  description = "Operator image repository the chart runs; null keeps the chart's default."
  type        = string
  default     = null
  nullable    = true
}

variable "image_tag" {
  description = "Operator image tag; null keeps the chart's default."
  type        = string
  default     = null
  nullable    = true
}

variable "operator_image_archive" {
  description = "OCI or docker archive of the operator image (make image builds one) loaded into the kind nodes; null loads nothing (the image is pulled)."
  type        = string
  default     = null
  nullable    = true
  validation {
    condition     = var.operator_image_archive == null || startswith(coalesce(var.operator_image_archive, "-"), "/")
    error_message = "operator_image_archive must be an absolute path."
  }
}

variable "cilium_chart_version" {
  description = "Cilium chart version."
  type        = string
  default     = "1.20.1"
}

variable "apply_echo_example" {
  description = "Apply examples/inference-kind.yaml (the echo InferenceService routed at model.localhost)."
  type        = bool
  default     = true
}

variable "http_add_on" {
  description = "Wake from zero on HTTP requests (scaling.http): the KEDA HTTP add-on installed with KEDA and the operator wired to it. Off by default."
  type = object({
    enabled = optional(bool, false)
    version = optional(string, "0.15.0")
  })
  default  = { enabled = false }
  nullable = false
}
