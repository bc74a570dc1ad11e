variable "kube_context" {
  description = "Kubeconfig context of the MicroK8s cluster (microk8s config > kubeconfig gives one named \"microk8s\")."
  type        = string
  default     = "microk8s"
  validation {
    condition     = length(trimspace(var.kube_context)) > 0
    error_message = "kube_context must name a context of your kubeconfig."
  }
}

variable "kubeconfig_path" {
  description = "Path of the kubeconfig holding kube_context."
  type        = string
  default     = "~/.kube/config"
}

variable "image_repository" {
  description = "Operator image repository, without tag; null keeps the chart's default."
  type        = string
  default     = null
  nullable    = true
  validation {
    condition     = var.image_repository == null || can(regex("^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$", var.image_repository))
    error_message = "image_repository must be an image name without tag or digest, in lower case, e.g. \"localhost:32000/model-fleet-operator\"."
  }
}

variable "image_tag" {
  description = "Operator image tag; null keeps the chart's default."
  type        = string
  default     = null
  nullable    = true
  validation {
    condition     = var.image_tag == null || can(regex("^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$", var.image_tag))
    error_message = "image_tag must be a tag such as \"0.1.0\"."
  }
}

variable "chart_path" {
  description = "Local path of the Model Fleet chart; null means this repository's charts/model-fleet-operator."
  type        = string
  default     = null
  nullable    = true
}

variable "gateway_api_crds_dir" {
  description = "Folder with the Gateway API v1.4.1 standard-channel CRD files; null skips them (the cluster has them)."
  type        = string
  default     = null
  nullable    = true
}

variable "install_keda" {
  description = "Install KEDA from its public chart repository."
  type        = bool
  default     = true
}

variable "http_add_on" {
  description = "Wake from zero on HTTP requests (scaling.http): the KEDA HTTP add-on installed with KEDA (install_keda; otherwise it must already run in namespace keda) and the operator wired to it. Off by default."
  type = object({
    enabled = optional(bool, false)
    version = optional(string, "0.15.0")
  })
  default  = { enabled = false }
  nullable = false
}

variable "gpu_operator" {
  description = "NVIDIA GPU Operator (driver optional: false when the hosts already have the NVIDIA driver)."
  type = object({
    install        = bool
    driver_enabled = optional(bool, true)
    chart_version  = optional(string, "v25.3.4")
  })
  default = { install = true }
}

variable "gpu_classes" {
  description = "Capacity classes the labelling rule may assign; null means all of the table."
  type        = list(string)
  default     = null
  nullable    = true
}
