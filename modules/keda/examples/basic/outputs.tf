output "keda_namespace" {
  description = "Where KEDA runs."
  value       = module.keda.namespace
}
