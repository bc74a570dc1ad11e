# The class labelling rule on a cluster running Node Feature Discovery and GPU Feature Discovery
# (e.g. through the gpu-operator module), kube context "my-cluster".
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

module "gpu_class_labels" {
  source = "../.."
}
