output "gpu_node_pools" {
  description = "Map of capacity class to { name, node_selector } of its node pool."
  value       = { for class, p in module.gpu_pool : class => { name = p.name, node_selector = p.node_selector } }
}
