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
