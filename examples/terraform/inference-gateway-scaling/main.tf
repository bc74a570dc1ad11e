# An echo server routed at http://model.localhost/ through the operator's default Gateway, scaled
# by KEDA on CPU between 1 and 3 replicas. `url` is known at plan time; apply waits until Ready.
terraform {
  required_providers {
    modelfleet = { source = "modelfleet/modelfleet" }
  }
}

variable "kubeconfig_path" {
  type = string
}

variable "namespace" {
  type = string
}

provider "modelfleet" {
  kubeconfig_path = var.kubeconfig_path
  namespace       = var.namespace
}

resource "modelfleet_inference" "echo" {
  name     = "echo"
  wait_for = "ready"

  model {
    name = "echo"
  }

  container {
    image          = "hashicorp/http-echo:1.0"
    args           = ["-listen=:8080", "-text=hello from model fleet"]
    port           = 8080
    readiness_path = "/"
    resources {
      requests = { cpu = "0.5", memory = "1.5Gi" }
      limits   = { memory = "2Gi" }
    }
  }

  replicas {
    min = 1
    max = 3
  }

  scaling {
    triggers {
      type        = "cpu"
      metric_type = "Utilization"
      metadata    = { value = "70" }
    }
    polling_interval = 15
  }

  gateway {
    hostnames   = ["model.localhost"]
    path_prefix = "/"
  }

  timeouts {
    create = "3m"
    update = "3m"
  }
}

output "url" {
  value = modelfleet_inference.echo.url
}
