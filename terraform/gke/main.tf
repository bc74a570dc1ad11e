# GPU node pools for Model Fleet's capacity classes on an existing GKE cluster: one pool per class
# (module gke-gpu-node-pool) with the accelerator, the modelfleet.io/gpu-class label (GKE adds
# cloud.google.com/gke-accelerator and the nvidia.com/gpu taint itself) and autoscaling limits.
#
# The Gateway: Model Fleet's shared Gateway uses GatewayClass cilium. When Cilium owns Gateway API,
# GKE's Gateway controller must not own it too: disable GKE's Gateway API on the cluster
# (gcloud container clusters update CLUSTER --gateway-api=disabled) and install the Gateway API CRDs
# with terraform/addons (gateway_api_crds_dir), so exactly one controller and one CRD source exist.
provider "google" {
  project = var.project
}

data "google_container_cluster" "this" {
  project  = var.project
  location = var.location
  name     = var.cluster
}

check "gateway_api_has_one_owner" {
  assert {
    condition     = !var.cilium_owns_gateway || try(data.google_container_cluster.this.gateway_api_config[0].channel, "CHANNEL_DISABLED") == "CHANNEL_DISABLED"
    error_message = "Cluster ${var.cluster} has GKE's Gateway API enabled (channel ${try(data.google_container_cluster.this.gateway_api_config[0].channel, "?")}) while Cilium owns the shared Gateway: disable it (gcloud container clusters update ${var.cluster} --location ${var.location} --gateway-api=disabled) or set cilium_owns_gateway = false."
  }
}

module "gpu_pool" {
  source            = "../../modules/gke-gpu-node-pool"
  for_each          = var.gpu_pools
  project           = var.project
  location          = var.location
  cluster           = var.cluster
  class             = each.key
  machine_type      = each.value.machine_type
  accelerator_type  = each.value.accelerator_type
  accelerator_count = each.value.accelerator_count
  autoscaling       = { min_nodes = each.value.min_nodes, max_nodes = each.value.max_nodes }
  node_locations    = each.value.node_locations
  spot              = each.value.spot
  taints            = each.value.taints
  service_account   = var.node_service_account
}
