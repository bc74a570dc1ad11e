output "gpu_class_ranges_mib" {
  description = "Per-GPU memory range (MiB, [min, max_exclusive]) labelled as each class."
  value       = module.gpu_class_labels.ranges_mib
}

output "default_gateway" {
  description = "NAMESPACE/NAME of the shared Gateway."
  value       = module.model_fleet.default_gateway
}
