output "namespace" {
  description = "Namespace KEDA runs in."
  value       = helm_release.keda.namespace
}

output "chart_version" {
  description = "Installed chart version."
  value       = helm_release.keda.version
}
