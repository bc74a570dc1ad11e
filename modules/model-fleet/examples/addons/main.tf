# Model Fleet from the repository's chart onto the cluster of kube context "my-cluster", EKS profile,
# with an image of your registry.
terraform {
  required_version = ">= 1.5.0"
  required_providers {
    helm = {
      source  = "hashicorp/helm"
      version = "1.3.2"
    }
    kubectl = {
      source  = "gavinbunney/kubectl"
      version = "1.19.0"
    }
  }
}

provider "helm" {
  kubernetes {
    config_path    = "~/.kube/config"
    config_context = "my-cluster"
  }
}

provider "kubectl" {
  config_path      = "~/.kube/config"
  config_context   = "my-cluster"
  load_config_file = true
}

module "model_fleet" {
  source           = "../.."
  profile          = "eks"
  image_repository = "registry.example.com/ml/model-fleet-operator"
  image_tag        = "0.1.0"
}
