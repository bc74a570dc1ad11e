# The Model Fleet operator from its local chart (charts/model-fleet-operator): CRDs, operator
# Deployment, RBAC and the shared Gateway, with the platform profile's values layer.
locals {
  chart_path = coalesce(var.chart_path, "${path.module}/../../charts/model-fleet-operator")
  image      = { for k, v in { repository = var.image_repository, tag = var.image_tag } : k => v if v != null }
  values = merge(
    {
      profile = var.profile
      gateway = {
        create           = var.gateway.create
        name             = var.gateway.name
        namespace        = var.gateway.namespace
        gatewayClassName = var.gateway.class_name
      }
    },
    length(local.image) > 0 ? { image = local.image } : {},
    # Only when enabled: the chart's default is off, and a disabled add-on leaves the values as they were.
    var.http_add_on.enabled ? {
      httpAddOn = {
        enabled            = true
        namespace          = var.http_add_on.namespace
        interceptorService = var.http_add_on.interceptor_service
        interceptorPort    = var.http_add_on.interceptor_port
        scalerAddress      = var.http_add_on.scaler_address == null ? "" : var.http_add_on.scaler_address
      }
    } : {},
    var.values,
  )
}

# The namespace and the CRDs are Terraform's, so `terraform destroy` removes them and
# `terraform apply` upgrades the CRDs (Helm installs a chart's crds/ once and never upgrades or
# deletes them). Destroying the CRDs deletes every InferenceService, TrainingRun and Dataset.
resource "kubectl_manifest" "namespace" {
  yaml_body = yamlencode({
    apiVersion = "v1"
    kind       = "Namespace"
    metadata   = { name = var.namespace }
  })
  server_side_apply = true
}

resource "kubectl_manifest" "crd" {
  for_each          = var.manage_crds ? toset(fileset("${local.chart_path}/crds", "*.yaml")) : toset([])
  yaml_body         = file("${local.chart_path}/crds/${each.key}")
  server_side_apply = true
  force_conflicts   = true
}

resource "helm_release" "model_fleet" {
  name             = var.release_name
  chart            = local.chart_path
  namespace        = var.namespace
  create_namespace = false
  skip_crds        = var.manage_crds
  wait             = true
  timeout          = var.timeout_seconds
  values           = [yamlencode(local.values)]
  depends_on       = [kubectl_manifest.namespace, kubectl_manifest.crd]
}
