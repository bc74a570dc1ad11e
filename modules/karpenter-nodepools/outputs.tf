output "node_pools" {
  description = "Map of pool key (cpu, or a class name) to its NodePool object."
  value       = local.node_pools
}

output "node_classes" {
  description = "Map of cpu/gpu to its EC2NodeClass object."
  value       = local.node_class
}

output "gpu_pool_names" {
  description = "Map of class name to its NodePool name."
  value       = { for name, p in local.gpu_pools : name => p.metadata.name }
}
