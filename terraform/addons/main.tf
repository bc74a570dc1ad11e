# Model Fleet onto an existing cluster: Gateway API CRDs, KEDA (and its HTTP add-on with
# http_add_on), the Model Fleet chart from the local path, and optionally the NVIDIA GPU Operator
# (bare metal). The cluster's CNI and Gateway controller (Cilium) are the cluster's own;
# terraform/kind installs them for a local cluster.
provider "helm" {
  kubernetes {
    config_path    = var.kubeconfig_path
    config_context = var.kube_context
  }
}

provider "kubectl" {
  config_path      = var.kubeconfig_path
  config_context   = var.kube_context
  load_config_file = true
}

module "gateway_api_crds" {
  source   = "../../modules/gateway-api-crds"
  count    = var.gateway_api_crds_dir == null ? 0 : 1
  crds_dir = var.gateway_api_crds_dir
}

module "keda" {
  source        = "../../modules/keda"
  count         = var.keda.install ? 1 : 0
  repository    = var.keda.repository
  chart         = var.keda.chart
  chart_version = var.keda.chart_version
  http_add_on   = { enabled = var.http_add_on.enabled, version = var.http_add_on.version, chart = var.http_add_on.chart }
}

module "gpu_operator" {
  source         = "../../modules/gpu-operator"
  count          = var.gpu_operator.install ? 1 : 0
  repository     = var.gpu_operator.repository
  chart          = var.gpu_operator.chart
  chart_version  = var.gpu_operator.chart_version
  driver_enabled = var.gpu_operator.driver_enabled
}

module "model_fleet" {
  source           = "../../modules/model-fleet"
  chart_path       = var.chart_path
  namespace        = var.namespace
  profile          = var.profile
  image_repository = var.image_repository
  image_tag        = var.image_tag
  gateway          = var.gateway
  values           = var.model_fleet_values
  # Installed here with KEDA, the add-on runs in KEDA's namespace; otherwise where http_add_on.namespace says.
  http_add_on = {
    enabled   = var.http_add_on.enabled
    namespace = coalesce(try(module.keda[0].http_add_on_namespace, null), var.http_add_on.namespace)
  }
  # The chart's shared Gateway needs the Gateway API CRDs; ScaledObjects need KEDA's (and the HTTP add-on's Role its
  # namespace).
  depends_on = [module.gateway_api_crds, module.keda]
}
