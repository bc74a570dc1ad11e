output "node_selector" {
  description = "Labels of the pool's nodes."
  value       = module.l4.node_selector
}
