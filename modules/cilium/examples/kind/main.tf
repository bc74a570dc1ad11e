# Cilium on a kind cluster created with `networking.disableDefaultCNI` and `kubeProxyMode: none`.
terraform {
  required_version = ">= 1.5.0"
  required_providers {
    helm = {
      source  = "hashicorp/helm"
      version = "1.3.2"
    }
  }
}

provider "helm" {
  kubernetes {
    config_path    = "~/.kube/config"
    config_context = "kind-model-fleet"
  }
}

module "cilium" {
  source           = "../.."
  k8s_service_host = "model-fleet-control-plane"
  gateway_api      = { enabled = true, host_network = true }
}
