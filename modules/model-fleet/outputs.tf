output "namespace" {
  description = "Namespace the operator runs in."
  value       = helm_release.model_fleet.namespace
}

output "release_name" {
  description = "Helm release name."
  value       = helm_release.model_fleet.name
}

output "profile" {
  description = "Platform profile installed."
  value       = var.profile
}

output "default_gateway" {
  description = "The shared Gateway as NAMESPACE/NAME: what spec.gateway.parentRef defaults to."
  value       = "${var.gateway.namespace}/${var.gateway.name}"
}

output "values" {
  description = "The chart values the module set (before the chart's own defaults)."
  value       = local.values
}

output "crd_names" {
  description = "Model Fleet CRDs applied by Terraform (empty when manage_crds is false)."
  value       = sort([for f in keys(kubectl_manifest.crd) : yamldecode(file("${local.chart_path}/crds/${f}")).metadata.name])
}

output "http_add_on_namespace" {
  description = "Namespace of the KEDA HTTP add-on the operator is wired to (its ReferenceGrants and Role live there), or null when http_add_on is off."
  value       = var.http_add_on.enabled ? var.http_add_on.namespace : null
}
