# KEDA, which scales InferenceServices that declare scaling triggers (their ScaledObjects).
resource "helm_release" "keda" {
  name             = "keda"
  repository       = var.repository
  chart            = var.chart
  version          = var.chart_version
  namespace        = var.namespace
  create_namespace = true
  wait             = true
  timeout          = var.timeout_seconds
  values = [yamlencode(merge({
    # ScaledObject admission webhooks catch what Model Fleet's CEL rules do not (DESIGN.md section 3).
    webhooks = { enabled = true }
  }, var.values))]
}

# The KEDA HTTP add-on (optional), which wakes InferenceServices with scaling.http from zero on their first request:
# its interceptor holds the request while the model starts. Same repository and namespace as KEDA, installed after
# it; its chart installs the add-on's CRDs (InterceptorRoute, http.keda.sh/v1beta1) with the release.
resource "helm_release" "http_add_on" {
  count      = var.http_add_on.enabled ? 1 : 0
  name       = "keda-add-ons-http"
  repository = var.repository
  chart      = var.http_add_on.chart
  version    = var.http_add_on.version
  # From KEDA's release: the namespace exists and KEDA runs before the add-on's interceptor ScaledObject is applied.
  namespace        = helm_release.keda.namespace
  create_namespace = false
  wait             = true
  timeout          = var.timeout_seconds
  values           = [yamlencode(var.http_add_on.values)]
}

# Where the add-on's Services are: its chart names them "keda-add-ons-http-<value>" (the chart's name, whatever the
# release's), with the chart's defaults unless http_add_on.values changes them.
locals {
  http_add_on_values = var.http_add_on.values
  http_add_on = {
    interceptor_service = "keda-add-ons-http-${try(local.http_add_on_values.interceptor.proxy.service, "interceptor-proxy")}"
    interceptor_port    = try(local.http_add_on_values.interceptor.proxy.port, 8080)
    scaler_service      = "keda-add-ons-http-${try(local.http_add_on_values.scaler.service, "external-scaler")}"
    scaler_port         = try(local.http_add_on_values.scaler.grpcPort, 9090)
  }
}
