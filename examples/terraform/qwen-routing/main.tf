# Two Qwen models behind one hostname (examples/qwen/routing.yaml): chat.example.test/qwen-7b/... and
# chat.example.test/qwen-small/..., the prefix stripped by the Gateway so each server serves /v1/... at its root.
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

locals {
  models = {
    "qwen-7b"    = { name = "Qwen/Qwen2.5-7B-Instruct", weights_gib = 14.2, kv_cache_gib = 4 }
    "qwen-small" = { name = "Qwen/Qwen2.5-1.5B-Instruct", weights_gib = 2.9, kv_cache_gib = 2 }
  }
}

resource "modelfleet_inference" "qwen" {
  for_each = local.models
  name     = each.key

  model {
    name        = each.value.name
    served_name = each.key
  }

  container {
    image = "vllm/vllm-openai:v0.8.5"
    args = [
      "--model=$(MODEL_FLEET_MODEL_NAME)",
      "--served-model-name=$(MODEL_FLEET_SERVED_MODEL_NAME)",
      "--port=8000",
    ]
    port           = 8000
    readiness_path = "/health"
  }

  gpu {
    count = 1
    fit {
      modules {
        name         = each.key
        weights_gib  = each.value.weights_gib
        kv_cache_gib = each.value.kv_cache_gib
        placement    = "replicated"
      }
    }
  }

  replicas {
    min = 1
    max = 1
  }

  gateway {
    hostnames         = ["chat.example.test"]
    path_prefix       = "/${each.key}"
    strip_path_prefix = true
  }
}

output "urls" {
  value = { for k, v in modelfleet_inference.qwen : k => v.url }
}
