# Cilium as the CNI, optionally replacing kube-proxy, with its Gateway API controller (the GatewayClass
# `cilium` Model Fleet's shared Gateway uses) and Hubble.
locals {
  values = merge({
    kubeProxyReplacement = var.kube_proxy_replacement
    k8sServiceHost       = var.k8s_service_host
    k8sServicePort       = var.k8s_service_port
    ipam                 = { mode = "kubernetes" }
    gatewayAPI = {
      enabled     = var.gateway_api.enabled
      hostNetwork = { enabled = var.gateway_api.host_network }
    }
    # A host-network Gateway listens on port 80 of the node itself: Envoy keeps NET_BIND_SERVICE.
    envoy = { securityContext = { capabilities = { keepCapNetBindService = var.gateway_api.host_network } } }
    hubble = {
      enabled = true
      relay   = { enabled = var.hubble.relay }
      ui      = { enabled = var.hubble.ui }
      metrics = {
        enableOpenMetrics = var.hubble.openmetrics
        enabled           = ["dns", "drop", "tcp", "flow", "port-distribution", "icmp", "httpV2"]
      }
    }
    prometheus = { enabled = true }
    operator   = { prometheus = { enabled = true } }
  }, var.values)
}

resource "helm_release" "cilium" {
  name       = "cilium"
  repository = var.repository
  chart      = var.chart
  version    = var.chart_version
  namespace  = var.namespace
  wait       = true
  timeout    = var.timeout_seconds
  values     = [yamlencode(local.values)]

  lifecycle {
    precondition {
      condition     = !var.kube_proxy_replacement || var.k8s_service_host != null
      error_message = "kube_proxy_replacement = true needs k8s_service_host (the API server address agents use without kube-proxy; on kind \"<cluster>-control-plane\")."
    }
  }
}
