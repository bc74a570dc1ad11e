variable "region" {
  description = "AWS region of the EKS cluster."
  type        = string
  validation {
    condition     = can(regex("^[a-z]{2}(-gov)?-[a-z]+-[0-9]$", var.region))
    error_message = "region must be an AWS region such as \"us-east-1\"."
  }
}

variable "cluster_name" {
  description = "Name of the existing EKS cluster (Karpenter's subnets and security groups carry the tag karpenter.sh/discovery = cluster_name)."
  type        = string
  validation {
    condition     = can(regex("^[0-9A-Za-z][A-Za-z0-9_-]{0,37}$", var.cluster_name))
    error_message = "cluster_name must be an EKS cluster name of at most 38 characters (letters, digits, '-', '_'): the IAM role and EventBridge rule names derived from it (<cluster>-karpenter-rebalance, at most 64 characters) must fit."
  }
}

variable "kube_context" {
  description = "Kubeconfig context of the cluster (aws eks update-kubeconfig --name CLUSTER writes one)."
  type        = string
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

variable "karpenter_namespace" {
  description = "Namespace the Karpenter controller runs in (its Pod Identity association)."
  type        = string
  default     = "kube-system"
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.karpenter_namespace))
    error_message = "karpenter_namespace must be a DNS label."
  }
}

variable "karpenter_service_account" {
  description = "ServiceAccount of the Karpenter controller."
  type        = string
  default     = "karpenter"
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", var.karpenter_service_account))
    error_message = "karpenter_service_account must be a DNS subdomain."
  }
}

variable "ami_alias" {
  description = "EC2NodeClass AMI alias (family@version); pin a version in production."
  type        = string
  default     = "al2023@latest"
}

variable "cpu_pool" {
  description = "The CPU NodePool (see module karpenter-nodepools); null disables it."
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
}

variable "gpu_classes" {
  description = "One GPU NodePool per capacity class: limits.gpus (required), optional limits.cpu/memory, gpu_names, capacity_types, weight (see module karpenter-nodepools)."
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
}

variable "tags" {
  description = "Tags added to every AWS resource created here."
  type        = map(string)
  default     = {}
}
