output "crds" {
  description = "CRDs installed."
  value       = module.gateway_api_crds.crd_names
}
