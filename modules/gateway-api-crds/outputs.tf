output "crd_names" {
  description = "Names of the CRDs installed, sorted."
  value       = sort([for c in local.crds : c.metadata.name])
}

output "bundle_version" {
  description = "Gateway API release installed."
  value       = var.bundle_version
}

output "ids" {
  description = "Map of file name to the applied manifest's id, for depends_on and triggers."
  value       = { for f, m in kubectl_manifest.crd : f => m.id }
}
