# An L4 pool (24gi) in an existing regional cluster.
terraform {
  required_version = ">= 1.5.0"
  required_providers {
    google = {
      source  = "hashicorp/google"
      version = "~> 6.0"
    }
  }
}

provider "google" {
  project = "my-project"
  region  = "us-central1"
}

module "l4" {
  source            = "../.."
  project           = "my-project"
  location          = "us-central1"
  cluster           = "ml"
  class             = "24gi"
  machine_type      = "g2-standard-8"
  accelerator_type  = "nvidia-l4"
  accelerator_count = 1
  node_locations    = ["us-central1-a", "us-central1-c"]
  autoscaling       = { min_nodes = 0, max_nodes = 4 }
}
