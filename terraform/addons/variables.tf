variable "kube_context" {
  description = "Context of the kubeconfig naming the existing cluster to install into."
  type        = string
  validation {
    condition     = length(trimspace(var.kube_context)) > 0
    error_message = "kube_context must name a context of your kubeconfig (kubectl config get-contexts)."
  }
}

variable "kubeconfig_path" {
  description = "Path of the kubeconfig holding kube_context."
  type        = string
  default     = "~/.kube/config"
  validation {
    condition     = length(trimspace(var.kubeconfig_path)) > 0
    error_message = "kubeconfig_path must not be empty (default ~/.kube/config)."
  }
}

variable "profile" {
  description = "Model Fleet chart profile of the cluster: kind, microk8s, eks or gke."
  type        = string
  validation {
    condition     = contains(["kind", "microk8s", "eks", "gke"], var.profile)
    error_message = "profile must be one of kind, microk8s, eks, gke."
  }
}

variable "image_repository" {
  description = "Operator image repository, without tag (e.g. ghcr.io/acme/model-fleet-operator); null keeps the chart's default."
  type        = string
  default     = null
  nullable    = true
  validation {
    condition     = var.image_repository == null || can(regex("^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$", var.image_repository))
    error_message = "image_repository must be an image name without tag or digest, in lower case, e.g. \"ghcr.io/acme/model-fleet-operator\"."
  }
}

variable "image_tag" {
  description = "Operator image tag; null keeps the chart's default (its appVersion)."
  type        = string
  default     = null
  nullable    = true
  validation {
    condition     = var.image_tag == null || can(regex("^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$", var.image_tag))
    error_message = "image_tag must be a tag such as \"0.1.0\": letters, digits, '_', '.', '-', at most 128 characters."
  }
}

variable "chart_path" {
  description = "Local path of the Model Fleet chart; null means this repository's charts/model-fleet-operator."
  type        = string
  default     = null
  nullable    = true
}

variable "namespace" {
  description = "Namespace of the Model Fleet operator."
  type        = string
  default     = "model-fleet-system"
}

variable "gateway" {
  description = "The shared Gateway the chart creates (InferenceService routes attach to it)."
  type = object({
    create     = bool
    name       = string
    namespace  = string
    class_name = string
  })
  default = { create = true, name = "shared", namespace = "model-fleet-system", class_name = "cilium" }
}

variable "model_fleet_values" {
  description = "Extra values for the Model Fleet chart (e.g. slack settings)."
  type        = any
  default     = {}
}

variable "gateway_api_crds_dir" {
  description = "Folder with the Gateway API v1.4.1 standard-channel CRD files; null skips installing them (the cluster has them already)."
  type        = string
  default     = null
  nullable    = true
}

variable "keda" {
  description = "KEDA: install it, and where its chart comes from (repository null + chart = a local .tgz for offline installs)."
  type = object({
    install       = bool
    repository    = optional(string, "https://kedacore.github.io/charts")
    chart         = optional(string, "keda")
    chart_version = optional(string, "2.20.2")
  })
  default = { install = true }
}

variable "http_add_on" {
  description = "Wake from zero on HTTP requests (scaling.http): the KEDA HTTP add-on, installed with KEDA when keda.install (chart from keda.repository; a local .tgz when that is null), and the operator wired to it. With keda.install false the add-on must already run in namespace. Off by default."
  type = object({
    enabled   = optional(bool, false)
    version   = optional(string, "0.15.0")
    chart     = optional(string, "keda-add-ons-http")
    namespace = optional(string, "keda")
  })
  default  = { enabled = false }
  nullable = false
}

variable "gpu_operator" {
  description = "NVIDIA GPU Operator, for bare-metal clusters with GPUs (off by default; EKS and GKE bring their own drivers and device plugins)."
  type = object({
    install        = bool
    repository     = optional(string, "https://helm.ngc.nvidia.com/nvidia")
    chart          = optional(string, "gpu-operator")
    chart_version  = optional(string, "v25.3.4")
    driver_enabled = optional(bool, true)
  })
  default = { install = false }
}
