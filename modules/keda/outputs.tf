output "namespace" {
  description = "Namespace KEDA runs in."
  value       = helm_release.keda.namespace
}

output "chart_version" {
  description = "Installed chart version."
  value       = helm_release.keda.version
}

output "http_add_on" {
  description = "Where the KEDA HTTP add-on runs, in the shape of modules/model-fleet's http_add_on (enabled, namespace, interceptor proxy Service and port, external scaler address), or null when it is not installed here."
  value = var.http_add_on.enabled ? {
    enabled             = true
    namespace           = helm_release.http_add_on[0].namespace
    interceptor_service = local.http_add_on.interceptor_service
    interceptor_port    = local.http_add_on.interceptor_port
    scaler_address      = "${local.http_add_on.scaler_service}.${helm_release.http_add_on[0].namespace}:${local.http_add_on.scaler_port}"
  } : null
}

output "http_add_on_namespace" {
  description = "Namespace the KEDA HTTP add-on runs in (KEDA's), or null when it is not installed here."
  value       = var.http_add_on.enabled ? helm_release.http_add_on[0].namespace : null
}
