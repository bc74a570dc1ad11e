variable "cluster_name" {
  description = "EKS cluster name; the default subnet and security group selectors use the tag karpenter.sh/discovery = cluster_name."
  type        = string
  validation {
    condition     = can(regex("^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$", var.cluster_name))
    error_message = "cluster_name must be an EKS cluster name: letters, digits, '-' and '_', starting with a letter or digit, at most 100 characters."
  }
}

variable "instance_profile" {
  description = "Name of the IAM instance profile nodes launch with (terraform/aws-karpenter creates it), so Karpenter needs no IAM instance-profile permissions."
  type        = string
  validation {
    condition     = can(regex("^[\\w+=,.@-]{1,128}$", var.instance_profile))
    error_message = "instance_profile must be an IAM instance profile name (not an ARN): letters, digits and +=,.@_- , at most 128 characters."
  }
}

variable "subnet_selector_tags" {
  description = "Tags selecting the node subnets; null means { \"karpenter.sh/discovery\" = cluster_name }."
  type        = map(string)
  default     = null
  nullable    = true
}

variable "security_group_selector_tags" {
  description = "Tags selecting the node security groups; null means { \"karpenter.sh/discovery\" = cluster_name }."
  type        = map(string)
  default     = null
  nullable    = true
}

variable "ami_alias" {
  description = "EC2NodeClass AMI alias (family@version). al2023 picks the NVIDIA variant for GPU instance types by itself; pin a version in production."
  type        = string
  default     = "al2023@latest"
  validation {
    condition     = can(regex("^(al2023|al2|bottlerocket|windows2019|windows2022)@(latest|v[0-9][0-9.-]*)$", var.ami_alias))
    error_message = "ami_alias must be FAMILY@VERSION with family al2023, al2, bottlerocket, windows2019 or windows2022 and version latest or vNNNN, e.g. \"al2023@v20250505\"."
  }
}

variable "gpu_root_volume_gib" {
  description = "Root volume of GPU nodes in GiB (model images and weights are large)."
  type        = number
  default     = 200
  validation {
    condition     = var.gpu_root_volume_gib >= 20 && var.gpu_root_volume_gib <= 16384
    error_message = "gpu_root_volume_gib must be between 20 and 16384."
  }
}

variable "cpu_pool" {
  description = "The CPU NodePool: instance categories (c, m, r ...), capacity types and limits (total vCPU and memory it may launch). null disables it."
  type = object({
    instance_categories = optional(list(string), ["c", "m", "r"])
    capacity_types      = optional(list(string), ["on-demand"])
    limits = object({
      cpu    = number
      memory = string
    })
  })
  default  = { limits = { cpu = 64, memory = "256Gi" } }
  nullable = true
  validation {
    condition     = var.cpu_pool == null || (var.cpu_pool.limits.cpu > 0 && can(regex("^[0-9]+(Mi|Gi|Ti)$", var.cpu_pool.limits.memory)))
    error_message = "cpu_pool.limits.cpu must be a positive number of vCPU and cpu_pool.limits.memory a quantity such as \"256Gi\"."
  }
  validation {
    condition     = var.cpu_pool == null || alltrue([for t in var.cpu_pool.capacity_types : contains(["on-demand", "spot", "reserved"], t)])
    error_message = "cpu_pool.capacity_types must be drawn from on-demand, spot, reserved."
  }
}

variable "gpu_classes" {
  description = <<-EOT
    One GPU NodePool per capacity class (keys: class names of the gpu-classes table). Per class:
    limits.gpus (total nvidia.com/gpu it may launch), optional limits.cpu / limits.memory, optional
    gpu_names (karpenter.k8s.aws/instance-gpu-name values; default per class, e.g. 24gi = a10g, l4),
    capacity_types (default on-demand) and weight (NodePool priority, default 10).
  EOT
  type = map(object({
    gpu_names      = optional(list(string))
    capacity_types = optional(list(string), ["on-demand"])
    weight         = optional(number, 10)
    limits = object({
      gpus   = number
      cpu    = optional(number)
      memory = optional(string)
    })
  }))
  default = {
    "24gi" = { limits = { gpus = 8 } }
    "80gi" = { limits = { gpus = 16 } }
  }
  validation {
    condition     = alltrue([for c in values(var.gpu_classes) : c.limits.gpus > 0 && floor(c.limits.gpus) == c.limits.gpus])
    error_message = "gpu_classes[*].limits.gpus must be a positive whole number of GPUs."
  }
  validation {
    condition     = alltrue([for c in values(var.gpu_classes) : alltrue([for t in c.capacity_types : contains(["on-demand", "spot", "reserved"], t)])])
    error_message = "gpu_classes[*].capacity_types must be drawn from on-demand, spot, reserved."
  }
  validation {
    condition     = alltrue([for c in values(var.gpu_classes) : c.weight >= 1 && c.weight <= 100])
    error_message = "gpu_classes[*].weight must be between 1 and 100."
  }
}

variable "disruption" {
  description = "Consolidation of GPU pools: WhenEmpty (default: a model server is never moved to save cost) or WhenEmptyOrUnderutilized, and how long a node stays before it is consolidated."
  type = object({
    gpu_policy        = optional(string, "WhenEmpty")
    consolidate_after = optional(string, "10m")
  })
  default = {}
  validation {
    condition     = contains(["WhenEmpty", "WhenEmptyOrUnderutilized"], var.disruption.gpu_policy) && can(regex("^([0-9]+(s|m|h))+$|^Never$", var.disruption.consolidate_after))
    error_message = "disruption.gpu_policy must be WhenEmpty or WhenEmptyOrUnderutilized and consolidate_after a duration such as \"10m\" or Never."
  }
}
