output "gpu_pools" {
  description = "NodePool name per class."
  value       = module.node_pools.gpu_pool_names
}
