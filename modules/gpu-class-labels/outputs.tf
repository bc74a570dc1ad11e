output "manifest" {
  description = "The NodeFeatureRule applied, as an object (apiVersion, kind, metadata, spec.rules)."
  value       = local.manifest
}

output "ranges_mib" {
  description = "Map of class to the per-GPU memory range it labels, as [min, max_exclusive] MiB (max null for the largest class)."
  value       = { for c in local.selected : c => [module.classes.classes[c].usable_mib, module.classes.classes[c].next_usable_mib] }
}
