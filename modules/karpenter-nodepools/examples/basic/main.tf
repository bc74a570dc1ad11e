# NodePools for the 24gi and 80gi classes and the CPU pool, into an EKS cluster whose Karpenter
# controller already runs (terraform/aws-karpenter creates its AWS resources).
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
  config_context   = "my-eks"
  load_config_file = true
}

module "node_pools" {
  source           = "../.."
  cluster_name     = "ml-prod"
  instance_profile = "ml-prod-karpenter-node"
  gpu_classes = {
    "24gi" = { limits = { gpus = 8 }, capacity_types = ["spot", "on-demand"] }
    "80gi" = { limits = { gpus = 16, memory = "4Ti" } }
  }
}
