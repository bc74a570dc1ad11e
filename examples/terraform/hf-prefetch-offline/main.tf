# Hugging Face loading pattern 1 (examples/huggingface/prefetch-offline.yaml): the token from the Secret
# `huggingface-read-token` (key `token`) reaches only the prefetch init container; it downloads one pinned commit
# into an emptyDir shared with the server, which runs with HF_HUB_OFFLINE=1. The token's value is never in the
# configuration or the state: only the Secret's name and key are.
# Fit: (2.9 GiB weights + 2 GiB KV + 2 GiB runtime) x 1.1 = 7.59 GiB -> capacity_class = "16gi", known at plan time.
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

resource "modelfleet_inference" "qwen_small" {
  name     = "qwen-small"
  wait_for = "ready"

  model {
    name        = "Qwen/Qwen2.5-1.5B-Instruct"
    revision    = "989aa7980e4cf806f80c7fef2b1adb7bc71aa306" # a commit, not a branch: copy the one you validated
    served_name = "qwen-small"
  }

  init_containers {
    name    = "prefetch"
    image   = "python:3.12-slim"
    command = ["sh", "-c"]
    args = [
      "pip install --no-cache-dir huggingface_hub==0.26.2 && huggingface-cli download \"$(MODEL_FLEET_MODEL_NAME)\" --revision \"$(MODEL_FLEET_MODEL_REVISION)\" --local-dir /models/qwen-small",
    ]
    env {
      name = "HF_TOKEN"
      secret_key_ref {
        name = "huggingface-read-token"
        key  = "token"
      }
    }
  }

  container {
    image = "vllm/vllm-openai:v0.8.5"
    args = [
      "--model=/models/qwen-small",
      "--served-model-name=$(MODEL_FLEET_SERVED_MODEL_NAME)",
      "--port=8000",
      "--max-model-len=8192",
    ]
    env {
      name  = "HF_HUB_OFFLINE"
      value = "1"
    }
    port           = 8000
    readiness_path = "/health"
  }

  volumes {
    name       = "models"
    mount_path = "/models"
    empty_dir {
      size_limit = "8Gi"
    }
  }

  gpu {
    count = 1
    fit {
      modules {
        name         = "qwen2.5-1.5b-instruct"
        weights_gib  = 2.9
        kv_cache_gib = 2
        placement    = "replicated"
      }
    }
  }

  replicas {
    min = 1
    max = 2
  }
}

output "capacity_class" {
  value = modelfleet_inference.qwen_small.capacity_class
}
