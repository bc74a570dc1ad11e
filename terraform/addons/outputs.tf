output "model_fleet_namespace" {
  description = "Namespace the operator runs in."
  value       = module.model_fleet.namespace
}

output "default_gateway" {
  description = "NAMESPACE/NAME of the shared Gateway (the default spec.gateway.parentRef of an InferenceService)."
  value       = module.model_fleet.default_gateway
}

output "profile" {
  description = "Chart profile installed."
  value       = module.model_fleet.profile
}

output "gateway_api_crds" {
  description = "Gateway API CRDs installed by this configuration (empty when the cluster had them)."
  value       = try(module.gateway_api_crds[0].crd_names, [])
}

output "keda_namespace" {
  description = "Namespace of KEDA, or null when not installed here."
  value       = try(module.keda[0].namespace, null)
}

output "http_add_on_namespace" {
  description = "Namespace of the KEDA HTTP add-on the operator is wired to, or null when http_add_on is off."
  value       = module.model_fleet.http_add_on_namespace
}
