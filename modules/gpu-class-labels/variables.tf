variable "name" {
  description = "Name of the NodeFeatureRule (cluster-scoped)."
  type        = string
  default     = "model-fleet-gpu-class"
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", var.name))
    error_message = "name must be a DNS subdomain, e.g. \"model-fleet-gpu-class\"."
  }
}

variable "classes" {
  description = "Capacity classes to label; null means every class of the gpu-classes table."
  type        = list(string)
  default     = null
  nullable    = true
}

variable "memory_feature" {
  description = "Node Feature Discovery feature holding GPU Feature Discovery's labels: GFD writes them as a feature file that NFD's local source reads as local.label."
  type        = string
  default     = "local.label"
  validation {
    condition     = can(regex("^[a-z]+\\.[a-z_]+$", var.memory_feature))
    error_message = "memory_feature must be an NFD feature name such as \"local.label\"."
  }
}
