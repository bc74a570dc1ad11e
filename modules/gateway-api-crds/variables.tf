variable "crds_dir" {
  description = "Folder holding the Gateway API CRD files (one CustomResourceDefinition per *.yaml), e.g. config/crd/standard of sigs.k8s.io/gateway-api at var.bundle_version; acceptance-tests/cluster/scripts/upstream-crds.sh prints a folder with them under gateway-api/."
  type        = string
  validation {
    condition     = length(fileset(var.crds_dir, "*.yaml")) > 0
    error_message = "crds_dir holds no *.yaml files: point it at config/crd/standard of the Gateway API release (acceptance-tests/cluster/scripts/upstream-crds.sh prints a folder containing gateway-api/)."
  }
}

variable "bundle_version" {
  description = "Gateway API release the files must come from (each CRD's gateway.networking.k8s.io/bundle-version annotation)."
  type        = string
  default     = "v1.4.1"
  validation {
    condition     = can(regex("^v[0-9]+\\.[0-9]+\\.[0-9]+$", var.bundle_version))
    error_message = "bundle_version must look like \"v1.4.1\"."
  }
}

variable "channel" {
  description = "Release channel the files must come from (gateway.networking.k8s.io/channel annotation): standard or experimental."
  type        = string
  default     = "standard"
  validation {
    condition     = contains(["standard", "experimental"], var.channel)
    error_message = "channel must be standard or experimental."
  }
}

variable "force_conflicts" {
  description = "Take over fields another field manager set (e.g. CRDs first applied with kubectl)."
  type        = bool
  default     = true
}
