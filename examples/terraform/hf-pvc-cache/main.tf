# Hugging Face loading pattern 2 (examples/huggingface/pvc-cache.yaml): replicas share one read-only model cache on the
# ReadWriteMany claim `hf-cache`, filled once by a Job (kept outside this configuration, e.g. with the hashicorp/
# kubernetes provider or `kubectl apply -f examples/huggingface/pvc-cache.yaml`); the server reads HF_HOME on the
# claim with HF_HUB_OFFLINE=1, at a pinned revision.
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

variable "cache_claim" {
  type    = string
  default = "hf-cache"
}

resource "modelfleet_inference" "qwen_7b" {
  name     = "qwen-7b"
  wait_for = "ready"

  model {
    name        = "Qwen/Qwen2.5-7B-Instruct"
    revision    = "a09a35458c702b33eeacc393d103063234e8bc28" # a commit, not a branch: copy the one you validated
    served_name = "qwen-7b"
  }

  container {
    image = "vllm/vllm-openai:v0.8.5"
    args = [
      "--model=$(MODEL_FLEET_MODEL_NAME)",
      "--revision=$(MODEL_FLEET_MODEL_REVISION)",
      "--served-model-name=$(MODEL_FLEET_SERVED_MODEL_NAME)",
      "--port=8000",
    ]
    env {
      name  = "HF_HOME"
      value = "/cache"
    }
    env {
      name  = "HF_HUB_OFFLINE"
      value = "1"
    }
    port           = 8000
    readiness_path = "/health"
  }

  volumes {
    name       = "cache"
    mount_path = "/cache"
    read_only  = true
    persistent_volume_claim {
      claim_name = var.cache_claim
    }
  }

  gpu {
    count = 1
    fit {
      modules {
        name         = "qwen2.5-7b-instruct"
        weights_gib  = 14.2
        kv_cache_gib = 4
        placement    = "replicated"
      }
    }
  }

  replicas {
    min = 2
    max = 2
  }
}
