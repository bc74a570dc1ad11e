# Gateway API v1.4.1 standard-channel CRDs from a local folder (e.g. the gateway-api/ folder that
# acceptance-tests/cluster/scripts/upstream-crds.sh prints), into kube context "my-cluster".
terraform {
  required_version = ">= 1.5.0"
  required_providers {
    kubectl = {
      source  = "gavinbunney/kubectl"
      version = "1.19.0"
    }
  }
}

provider "kubectl" {
  config_path      = "~/.kube/config"
  config_context   = "my-cluster"
  load_config_file = true
}

module "gateway_api_crds" {
  source   = "../.."
  crds_dir = var.crds_dir
}
