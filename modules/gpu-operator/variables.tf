variable "chart_version" {
  description = "NVIDIA GPU Operator chart version (as NVIDIA tags it, with the leading v)."
  type        = string
  default     = "v25.3.4"
  validation {
    condition     = can(regex("^v[0-9]+\\.[0-9]+\\.[0-9]+$", var.chart_version))
    error_message = "chart_version must look like \"v25.3.4\"."
  }
}

variable "repository" {
  description = "Chart repository URL, or null when chart is a local path or archive."
  type        = string
  default     = "https://helm.ngc.nvidia.com/nvidia"
  nullable    = true
  validation {
    condition     = var.repository == null || can(regex("^(https?|oci)://", var.repository))
    error_message = "repository must start with https://, http:// or oci://, or be null for a local chart."
  }
}

variable "chart" {
  description = "Chart name in the repository, or a local chart folder or .tgz when repository is null."
  type        = string
  default     = "gpu-operator"
}

variable "namespace" {
  description = "Namespace of the GPU Operator (created when missing)."
  type        = string
  default     = "gpu-operator"
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.namespace))
    error_message = "namespace must be a DNS label, e.g. \"gpu-operator\"."
  }
}

variable "driver_enabled" {
  description = "Let the operator install the NVIDIA driver (false when the hosts already have it)."
  type        = bool
  default     = true
}

variable "containerd" {
  description = "Where the container toolkit finds containerd, for distributions that move it (MicroK8s: config /var/snap/microk8s/current/args/containerd-template.toml, socket /var/snap/microk8s/common/run/containerd.sock). null keeps the operator's defaults."
  type = object({
    config = string
    socket = string
  })
  default  = null
  nullable = true
  validation {
    condition     = var.containerd == null || (startswith(try(var.containerd.config, ""), "/") && startswith(try(var.containerd.socket, ""), "/"))
    error_message = "containerd.config and containerd.socket must be absolute paths."
  }
}

variable "extra_label_namespaces" {
  description = "Label namespaces Node Feature Discovery may write besides its own. modelfleet.io is needed for the modelfleet.io/gpu-class labels of module gpu-class-labels; nvidia.com for GPU Feature Discovery's."
  type        = list(string)
  default     = ["nvidia.com", "modelfleet.io"]
  validation {
    condition     = alltrue([for ns in var.extra_label_namespaces : can(regex("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", ns))])
    error_message = "extra_label_namespaces must be DNS names such as \"modelfleet.io\"."
  }
}

variable "values" {
  description = "Extra chart values (an object), merged over the module's (top-level keys replace)."
  type        = any
  default     = {}
}

variable "timeout_seconds" {
  description = "How long Helm waits for the operator's own pods (driver builds continue afterwards)."
  type        = number
  default     = 900
  validation {
    condition     = var.timeout_seconds >= 30 && var.timeout_seconds <= 3600
    error_message = "timeout_seconds must be between 30 and 3600."
  }
}
