output "default_gateway" {
  description = "Where InferenceService routes attach by default."
  value       = module.model_fleet.default_gateway
}
