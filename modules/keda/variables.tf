variable "namespace" {
  description = "Namespace KEDA is installed into (created when missing)."
  type        = string
  default     = "keda"
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.namespace))
    error_message = "namespace must be a DNS label (lower-case letters, digits and '-', at most 63 characters), e.g. \"keda\"."
  }
}

variable "chart_version" {
  description = "Version of the kedacore/keda chart (the chart's version equals KEDA's)."
  type        = string
  default     = "2.20.2"
  validation {
    condition     = can(regex("^[0-9]+\\.[0-9]+\\.[0-9]+$", var.chart_version))
    error_message = "chart_version must be a version like \"2.20.2\" (no leading v)."
  }
}

variable "repository" {
  description = "Chart repository URL, or null when chart is a local path or archive (offline installs)."
  type        = string
  default     = "https://kedacore.github.io/charts"
  nullable    = true
  validation {
    condition     = var.repository == null || can(regex("^(https?|oci)://", var.repository))
    error_message = "repository must start with https://, http:// or oci://, or be null for a local chart."
  }
}

variable "chart" {
  description = "Chart name in the repository, or a local chart folder or .tgz when repository is null."
  type        = string
  default     = "keda"
  validation {
    condition     = length(trimspace(var.chart)) > 0
    error_message = "chart must not be empty: \"keda\", or a local path when repository is null."
  }
}

variable "values" {
  description = "Extra chart values (an object), merged over the module's."
  type        = any
  default     = {}
}

variable "timeout_seconds" {
  description = "How long Helm waits for KEDA's pods to be ready."
  type        = number
  default     = 600
  validation {
    condition     = var.timeout_seconds >= 30 && var.timeout_seconds <= 3600
    error_message = "timeout_seconds must be between 30 and 3600."
  }
}

variable "http_add_on" {
  description = "The KEDA HTTP add-on (chart keda-add-ons-http of the same repository, into KEDA's namespace), needed by InferenceServices with scaling.http: install it or not, its chart version, the chart name (or a local folder / .tgz when repository is null) and extra chart values."
  type = object({
    enabled = optional(bool, false)
    version = optional(string, "0.15.0")
    chart   = optional(string, "keda-add-ons-http")
    values  = optional(any, {})
  })
  default  = { enabled = false, version = "0.15.0" }
  nullable = false
  validation {
    condition     = can(regex("^[0-9]+\\.[0-9]+\\.[0-9]+$", var.http_add_on.version))
    error_message = "http_add_on.version must be a version like \"0.15.0\" (no leading v)."
  }
  validation {
    condition     = length(trimspace(var.http_add_on.chart)) > 0
    error_message = "http_add_on.chart must not be empty: \"keda-add-ons-http\", or a local path when repository is null."
  }
}
