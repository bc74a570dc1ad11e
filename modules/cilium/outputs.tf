output "gateway_class" {
  description = "GatewayClass served by Cilium's Gateway API controller (null when disabled)."
  value       = var.gateway_api.enabled ? "cilium" : null
}

output "chart_version" {
  description = "Installed chart version."
  value       = helm_release.cilium.version
}

output "namespace" {
  description = "Namespace Cilium runs in."
  value       = helm_release.cilium.namespace
}
