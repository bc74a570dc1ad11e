output "gpu_operator_namespace" {
  description = "Where the GPU Operator runs."
  value       = module.gpu_operator.namespace
}
