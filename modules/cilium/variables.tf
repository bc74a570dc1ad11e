variable "chart_version" {
  description = "Cilium chart version (equals the Cilium version)."
  type        = string
  default     = "1.20.1"
  validation {
    condition     = can(regex("^[0-9]+\\.[0-9]+\\.[0-9]+$", var.chart_version))
    error_message = "chart_version must be a version like \"1.20.1\" (no leading v)."
  }
}

variable "repository" {
  description = "Chart repository URL, or null when chart is a local path or archive."
  type        = string
  default     = "https://helm.cilium.io"
  nullable    = true
  validation {
    condition     = var.repository == null || can(regex("^(https?|oci)://", var.repository))
    error_message = "repository must start with https://, http:// or oci://, or be null for a local chart."
  }
}

variable "chart" {
  description = "Chart name in the repository, or a local chart folder or .tgz when repository is null."
  type        = string
  default     = "cilium"
}

variable "namespace" {
  description = "Namespace Cilium runs in."
  type        = string
  default     = "kube-system"
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.namespace))
    error_message = "namespace must be a DNS label, e.g. \"kube-system\"."
  }
}

variable "kube_proxy_replacement" {
  description = "Run Cilium as the kube-proxy replacement (the cluster must have no kube-proxy); then k8s_service_host and k8s_service_port are required."
  type        = bool
  default     = true
}

variable "k8s_service_host" {
  description = "Address the agents reach the API server on without kube-proxy (kind: \"<cluster>-control-plane\")."
  type        = string
  default     = null
  nullable    = true
}

variable "k8s_service_port" {
  description = "Port of k8s_service_host (kind: 6443)."
  type        = number
  default     = 6443
  validation {
    condition     = var.k8s_service_port >= 1 && var.k8s_service_port <= 65535
    error_message = "k8s_service_port must be a TCP port, 1..65535."
  }
}

variable "gateway_api" {
  description = "Cilium's Gateway API controller (GatewayClass \"cilium\"); host_network binds Gateway listeners on every node's own ports (kind port mappings reach them). The Gateway API CRDs must exist before Cilium starts."
  type = object({
    enabled      = bool
    host_network = bool
  })
  default = { enabled = true, host_network = false }
}

variable "hubble" {
  description = "Hubble flow visibility: relay and UI, and OpenMetrics-format flow metrics."
  type = object({
    relay       = bool
    ui          = bool
    openmetrics = bool
  })
  default = { relay = true, ui = true, openmetrics = true }
}

variable "values" {
  description = "Extra chart values (an object), merged over the module's (top-level keys replace)."
  type        = any
  default     = {}
}

variable "timeout_seconds" {
  description = "How long Helm waits for Cilium to be ready."
  type        = number
  default     = 900
  validation {
    condition     = var.timeout_seconds >= 30 && var.timeout_seconds <= 3600
    error_message = "timeout_seconds must be between 30 and 3600."
  }
}
