variable "project" {
  description = "Google Cloud project of the cluster."
  type        = string
  validation {
    condition     = can(regex("^[a-z][-a-z0-9]{4,28}[a-z0-9]$", var.project))
    error_message = "project must be a project id: 6-30 lower-case letters, digits or '-', starting with a letter."
  }
}

variable "location" {
  description = "Cluster location: a region (regional cluster) or a zone."
  type        = string
  validation {
    condition     = can(regex("^[a-z]+-[a-z]+[0-9]+(-[a-z])?$", var.location))
    error_message = "location must be a region such as \"us-central1\" or a zone such as \"us-central1-a\"."
  }
}

variable "cluster" {
  description = "Name of the existing GKE cluster."
  type        = string
  validation {
    condition     = can(regex("^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$", var.cluster))
    error_message = "cluster must be a GKE cluster name: lower-case letters, digits and '-', at most 40 characters."
  }
}

variable "class" {
  description = "Capacity class of the pool (a class name of the gpu-classes table); becomes the modelfleet.io/gpu-class node label."
  type        = string
}

variable "name" {
  description = "Node pool name; null means \"gpu-<class>\"."
  type        = string
  default     = null
  nullable    = true
  validation {
    condition     = var.name == null || can(regex("^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$", var.name))
    error_message = "name must be lower-case letters, digits and '-', at most 40 characters."
  }
}

variable "machine_type" {
  description = "Machine type, e.g. g2-standard-8 (L4, 24gi) or a3-highgpu-8g (H100 80GB, 80gi)."
  type        = string
  validation {
    condition     = can(regex("^[a-z][a-z0-9]*-[a-z0-9-]+$", var.machine_type))
    error_message = "machine_type must be a Compute Engine machine type such as \"g2-standard-8\"."
  }
}

variable "accelerator_type" {
  description = "GPU type (the value GKE puts in the cloud.google.com/gke-accelerator node label), e.g. nvidia-l4, nvidia-h100-80gb."
  type        = string
  validation {
    condition     = can(regex("^nvidia-[a-z0-9-]+$", var.accelerator_type))
    error_message = "accelerator_type must be a GKE accelerator type such as \"nvidia-l4\" or \"nvidia-h100-80gb\"."
  }
}

variable "accelerator_count" {
  description = "GPUs per node (must match what the machine type carries)."
  type        = number
  validation {
    condition     = contains([1, 2, 4, 8, 16], var.accelerator_count)
    error_message = "accelerator_count must be 1, 2, 4, 8 or 16."
  }
}

variable "gpu_driver_version" {
  description = "Driver GKE installs: DEFAULT, LATEST, or INSTALLATION_DISABLED (you install it, e.g. with the GPU Operator)."
  type        = string
  default     = "LATEST"
  validation {
    condition     = contains(["DEFAULT", "LATEST", "INSTALLATION_DISABLED"], var.gpu_driver_version)
    error_message = "gpu_driver_version must be DEFAULT, LATEST or INSTALLATION_DISABLED."
  }
}

variable "autoscaling" {
  description = "Cluster autoscaler limits: total nodes of the pool across its zones."
  type = object({
    min_nodes = number
    max_nodes = number
  })
  default = { min_nodes = 0, max_nodes = 2 }
  validation {
    condition     = var.autoscaling.min_nodes >= 0 && var.autoscaling.max_nodes >= 1 && var.autoscaling.min_nodes <= var.autoscaling.max_nodes
    error_message = "autoscaling needs 0 <= min_nodes <= max_nodes and max_nodes >= 1."
  }
}

variable "node_locations" {
  description = "Zones of the pool (GPUs exist only in some zones); null means the cluster's."
  type        = list(string)
  default     = null
  nullable    = true
}

variable "spot" {
  description = "Use Spot VMs."
  type        = bool
  default     = false
}

variable "disk_size_gb" {
  description = "Boot disk size in GB (model images are large)."
  type        = number
  default     = 200
  validation {
    condition     = var.disk_size_gb >= 10 && var.disk_size_gb <= 65536
    error_message = "disk_size_gb must be between 10 and 65536."
  }
}

variable "service_account" {
  description = "Email of the node service account; null means the Compute Engine default."
  type        = string
  default     = null
  nullable    = true
}

variable "labels" {
  description = "Extra Kubernetes node labels (the class label is always set)."
  type        = map(string)
  default     = {}
}

variable "taints" {
  description = "Extra node taints ({ key, value, effect } with effect NO_SCHEDULE, PREFER_NO_SCHEDULE or NO_EXECUTE). GKE adds nvidia.com/gpu=present:NoSchedule to GPU nodes itself."
  type = list(object({
    key    = string
    value  = string
    effect = string
  }))
  default = []
  validation {
    condition     = alltrue([for t in var.taints : contains(["NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE"], t.effect)])
    error_message = "taints[*].effect must be NO_SCHEDULE, PREFER_NO_SCHEDULE or NO_EXECUTE."
  }
}
