# The GPU Operator on MicroK8s, whose containerd lives under /var/snap/microk8s.
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
    config_context = "microk8s"
  }
}

module "gpu_operator" {
  source = "../.."
  containerd = {
    config = "/var/snap/microk8s/current/args/containerd-template.toml"
    socket = "/var/snap/microk8s/common/run/containerd.sock"
  }
}
