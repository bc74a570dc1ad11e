terraform {
  required_version = ">= 1.5.0"
  required_providers {
    # The versions terraform validate and the acceptance test run against (see
    # acceptance-tests/infra/README.md for why these and how they are built).
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
