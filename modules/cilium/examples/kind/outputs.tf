output "gateway_class" {
  description = "GatewayClass to put in Gateways."
  value       = module.cilium.gateway_class
}
