output "name" {
  description = "Node pool name."
  value       = google_container_node_pool.gpu.name
}

output "class" {
  description = "Capacity class of the pool's nodes (their modelfleet.io/gpu-class label)."
  value       = var.class
}

output "node_selector" {
  description = "Labels that select this pool's nodes: the class and GKE's accelerator label."
  value = {
    (module.classes.label)             = var.class
    "cloud.google.com/gke-accelerator" = var.accelerator_type
  }
}
