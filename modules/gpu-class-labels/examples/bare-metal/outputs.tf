output "ranges_mib" {
  description = "Per-GPU memory range labelled as each class."
  value       = module.gpu_class_labels.ranges_mib
}
