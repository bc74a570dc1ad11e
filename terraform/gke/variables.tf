variable "project" {
  description = "Google Cloud project of the cluster."
  type        = string
  validation {
    condition     = can(regex("^[a-z][-a-z0-9]{4,28}[a-z0-9]$", var.project))
    error_message = "project must be a project id: 6-30 lower-case letters, digits or '-', starting with a letter."
  }
}

variable "location" {
  description = "Location of the existing cluster (region or zone)."
  type        = string
  validation {
    condition     = can(regex("^[a-z]+-[a-z]+[0-9]+(-[a-z])?$", var.location))
    error_message = "location must be a region such as \"us-central1\" or a zone such as \"us-central1-a\"."
  }
}

variable "cluster" {
  description = "Name of the existing GKE cluster."
  type        = string
}

variable "cilium_owns_gateway" {
  description = "Cilium's Gateway API controller serves Model Fleet's shared Gateway (GatewayClass cilium). Then GKE's own Gateway API must be disabled on the cluster (gateway_api_config channel CHANNEL_DISABLED), so GKE neither installs its own Gateway API CRDs nor reconciles Gateways; a check warns when it is not."
  type        = bool
  default     = true
}

variable "gpu_pools" {
  description = "One node pool per capacity class (key = class name of the gpu-classes table): machine type, accelerator type and count, autoscaling limits, zones, spot."
  type = map(object({
    machine_type      = string
    accelerator_type  = string
    accelerator_count = number
    min_nodes         = optional(number, 0)
    max_nodes         = number
    node_locations    = optional(list(string))
    spot              = optional(bool, false)
    taints = optional(list(object({
      key    = string
      value  = string
      effect = string
    })), [])
  }))
  default = {
    "24gi" = { machine_type = "g2-standard-8", accelerator_type = "nvidia-l4", accelerator_count = 1, max_nodes = 4 }
    "80gi" = { machine_type = "a3-highgpu-8g", accelerator_type = "nvidia-h100-80gb", accelerator_count = 8, max_nodes = 1 }
  }
  validation {
    condition     = length(var.gpu_pools) > 0
    error_message = "gpu_pools needs at least one class."
  }
}

variable "node_service_account" {
  description = "Email of the node service account; null means the Compute Engine default."
  type        = string
  default     = null
  nullable    = true
}
