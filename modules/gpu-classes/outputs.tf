output "names" {
  description = "Class names (values of the node label modelfleet.io/gpu-class), smallest first."
  value       = [for c in local.table : c.name]
}

output "classes" {
  description = <<-EOT
    Map of class name to { name, usable_mib, next_usable_mib, example_products, order }. A node with
    per-GPU memory M MiB belongs to the class with usable_mib <= M < next_usable_mib (next_usable_mib
    is null for the largest class). order is the position in the table, smallest first.
  EOT
  value       = local.classes
}

output "label" {
  description = "The node label carrying the class."
  value       = "modelfleet.io/gpu-class"
}

output "gpu_taint" {
  description = "The GPU taint Model Fleet's GPU pods tolerate (key, value, effect as Kubernetes spells it)."
  value       = { key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" }
}
