output "namespace" {
  description = "Namespace the GPU Operator runs in."
  value       = helm_release.gpu_operator.namespace
}

output "chart_version" {
  description = "Installed chart version."
  value       = helm_release.gpu_operator.version
}
