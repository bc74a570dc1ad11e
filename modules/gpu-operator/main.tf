# The NVIDIA GPU Operator for bare metal and on-premises clusters: driver, container toolkit, device
# plugin (the nvidia.com/gpu resource), GPU Feature Discovery (nvidia.com/gpu.memory and
# nvidia.com/gpu.product labels) and the Node Feature Discovery it builds on.
locals {
  toolkit_env = var.containerd == null ? [] : [
    { name = "CONTAINERD_CONFIG", value = var.containerd.config },
    { name = "CONTAINERD_SOCKET", value = var.containerd.socket },
    { name = "CONTAINERD_RUNTIME_CLASS", value = "nvidia" },
    { name = "CONTAINERD_SET_AS_DEFAULT", value = "1" },
  ]
  values = merge({
    driver  = { enabled = var.driver_enabled }
    toolkit = { enabled = true, env = local.toolkit_env }
    nfd     = { enabled = true }
    gfd     = { enabled = true }
    "node-feature-discovery" = {
      master = { config = { extraLabelNs = var.extra_label_namespaces } }
    }
  }, var.values)
}

resource "helm_release" "gpu_operator" {
  name             = "gpu-operator"
  repository       = var.repository
  chart            = var.chart
  version          = var.chart_version
  namespace        = var.namespace
  create_namespace = true
  wait             = true
  timeout          = var.timeout_seconds
  values           = [yamlencode(local.values)]
}
