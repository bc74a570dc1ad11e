# Model Fleet on bare metal with MicroK8s: the chart's microk8s profile, KEDA (and its HTTP add-on
# with http_add_on), Gateway API CRDs, the NVIDIA GPU Operator wired to MicroK8s' containerd, and
# the modelfleet.io/gpu-class labels derived from GPU Feature Discovery's nvidia.com/gpu.memory
# (module gpu-class-labels, the rule of docs/GPU_CAPACITY.md).
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
  source      = "../../modules/keda"
  count       = var.install_keda ? 1 : 0
  http_add_on = { enabled = var.http_add_on.enabled, version = var.http_add_on.version }
}

module "gpu_operator" {
  source         = "../../modules/gpu-operator"
  count          = var.gpu_operator.install ? 1 : 0
  chart_version  = var.gpu_operator.chart_version
  driver_enabled = var.gpu_operator.driver_enabled
  # MicroK8s runs its own containerd under /var/snap/microk8s.
  containerd = {
    config = "/var/snap/microk8s/current/args/containerd-template.toml"
    socket = "/var/snap/microk8s/common/run/containerd.sock"
  }
}

# Needs Node Feature Discovery's NodeFeatureRule CRD, which the GPU Operator's NFD installs.
module "gpu_class_labels" {
  source     = "../../modules/gpu-class-labels"
  classes    = var.gpu_classes
  depends_on = [module.gpu_operator]
}

module "model_fleet" {
  source           = "../../modules/model-fleet"
  chart_path       = var.chart_path
  profile          = "microk8s"
  image_repository = var.image_repository
  image_tag        = var.image_tag
  # Installed here with KEDA, the add-on runs in KEDA's namespace; otherwise in "keda" (the module's default).
  http_add_on = { enabled = var.http_add_on.enabled, namespace = try(module.keda[0].http_add_on_namespace, null) }
  depends_on  = [module.gateway_api_crds, module.keda]
}
