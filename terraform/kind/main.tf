# A disposable kind cluster for Model Fleet: one control-plane node and one worker, no default CNI
# and no kube-proxy; Gateway API CRDs v1.4.1; Cilium as kube-proxy replacement with its Gateway
# controller in host-network mode, Hubble Relay and UI and OpenMetrics; KEDA (and its HTTP add-on
# with http_add_on); Model Fleet from the local chart (profile kind); the control-plane's port 80
# mapped to 127.0.0.1:host_port, so
#   curl -H 'Host: model.localhost' http://127.0.0.1:8080/
# reaches the echo example. Run through `make kind-up` (it first creates the cluster alone:
# the providers below read the kubeconfig kind writes).
locals {
  context = "kind-${var.cluster_name}"
  kind_config = {
    kind       = "Cluster"
    apiVersion = "kind.x-k8s.io/v1alpha4"
    networking = { disableDefaultCNI = true, kubeProxyMode = "none" }
    nodes = [
      {
        role = "control-plane"
        extraPortMappings = [{
          containerPort = 80
          hostPort      = var.host_port
          listenAddress = "127.0.0.1"
          protocol      = "TCP"
        }]
      },
      { role = "worker" },
    ]
  }
}

# The cluster itself, through the kind CLI (no kind Terraform provider is available to this
# project: see acceptance-tests/infra/README.md). Destroying it deletes the cluster.
resource "terraform_data" "cluster" {
  input = {
    name       = var.cluster_name
    kind_bin   = var.kind_bin
    kubeconfig = var.kubeconfig_path
    config     = yamlencode(local.kind_config)
    node_image = var.node_image
  }

  provisioner "local-exec" {
    command = <<-EOT
      set -eu
      mkdir -p "$(dirname "$KUBECONFIG_PATH")"
      printf '%s' "$KIND_CONFIG" >"$KUBECONFIG_PATH.kind-config.yaml"
      if ! "$KIND_BIN" get clusters | grep -qx "$CLUSTER"; then
        "$KIND_BIN" create cluster --name "$CLUSTER" --config "$KUBECONFIG_PATH.kind-config.yaml" \
          --kubeconfig "$KUBECONFIG_PATH" $${NODE_IMAGE:+--image "$NODE_IMAGE"} --wait 0s
      fi
      "$KIND_BIN" export kubeconfig --name "$CLUSTER" --kubeconfig "$KUBECONFIG_PATH"
    EOT
    environment = {
      KIND_BIN        = self.input.kind_bin
      CLUSTER         = self.input.name
      KUBECONFIG_PATH = self.input.kubeconfig
      KIND_CONFIG     = self.input.config
      NODE_IMAGE      = coalesce(self.input.node_image, "")
    }
    interpreter = ["/bin/sh", "-c"]
  }

  provisioner "local-exec" {
    when        = destroy
    command     = "\"$KIND_BIN\" delete cluster --name \"$CLUSTER\" --kubeconfig \"$KUBECONFIG_PATH\""
    environment = { KIND_BIN = self.input.kind_bin, CLUSTER = self.input.name, KUBECONFIG_PATH = self.input.kubeconfig }
    interpreter = ["/bin/sh", "-c"]
  }
}

# The operator image, loaded into the nodes so the chart's pods need no registry.
resource "terraform_data" "operator_image" {
  count            = var.operator_image_archive == null ? 0 : 1
  triggers_replace = [terraform_data.cluster.id, filesha256(var.operator_image_archive)]
  provisioner "local-exec" {
    command     = "\"$KIND_BIN\" load image-archive \"$ARCHIVE\" --name \"$CLUSTER\""
    environment = { KIND_BIN = var.kind_bin, ARCHIVE = var.operator_image_archive, CLUSTER = var.cluster_name }
    interpreter = ["/bin/sh", "-c"]
  }
}

provider "helm" {
  kubernetes {
    config_path    = var.kubeconfig_path
    config_context = local.context
  }
}

provider "kubectl" {
  config_path      = var.kubeconfig_path
  config_context   = local.context
  load_config_file = true
}

module "gateway_api_crds" {
  source     = "../../modules/gateway-api-crds"
  crds_dir   = var.gateway_api_crds_dir
  depends_on = [terraform_data.cluster]
}

module "cilium" {
  source           = "../../modules/cilium"
  chart_version    = var.cilium_chart_version
  k8s_service_host = "${var.cluster_name}-control-plane"
  k8s_service_port = 6443
  gateway_api      = { enabled = true, host_network = true }
  hubble           = { relay = true, ui = true, openmetrics = true }
  # Cilium enables its Gateway controller only when the Gateway API CRDs exist at start-up.
  depends_on = [module.gateway_api_crds]
}

module "keda" {
  source      = "../../modules/keda"
  http_add_on = { enabled = var.http_add_on.enabled, version = var.http_add_on.version }
  depends_on  = [module.cilium]
}

module "model_fleet" {
  source           = "../../modules/model-fleet"
  chart_path       = var.chart_path
  profile          = "kind"
  image_repository = var.image_repository
  image_tag        = var.image_tag
  http_add_on      = { enabled = var.http_add_on.enabled, namespace = module.keda.http_add_on_namespace }
  depends_on       = [module.cilium, module.keda, terraform_data.operator_image]
}

resource "kubectl_manifest" "echo_example" {
  count             = var.apply_echo_example ? 1 : 0
  yaml_body         = file("${path.module}/../../examples/inference-kind.yaml")
  server_side_apply = true
  depends_on        = [module.model_fleet]
}
