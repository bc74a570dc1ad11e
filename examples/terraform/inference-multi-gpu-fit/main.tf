# The worked example of docs/GPU_CAPACITY.md: 70 GiB of weights and 20 GiB of KV cache sharded over
# 2 GPUs (tensor parallel), 4 GiB runtime per GPU, 10% margin:
# (90 / 2 + 4) x 1.1 = 53.9 GiB -> per_gpu_memory_gib = 54 -> capacity_class = "80gi",
# both shown by `terraform plan` before anything exists.
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

resource "modelfleet_inference" "llama_70b" {
  name   = "llama-70b"
  intent = "active"

  model {
    name        = "meta-llama/Llama-3.1-70B-Instruct"
    served_name = "llama-70b"
  }

  container {
    image = "vllm/vllm-openai:v0.8.5"
    args = [
      "--model=$(MODEL_FLEET_MODEL_NAME)",
      "--served-model-name=$(MODEL_FLEET_SERVED_MODEL_NAME)",
      "--tensor-parallel-size=2",
      "--port=8000",
    ]
    port           = 8000
    readiness_path = "/health"
    env {
      name = "HF_TOKEN"
      secret_key_ref {
        name = "huggingface-read-token"
        key  = "token"
      }
    }
    resources {
      requests = { cpu = "8", memory = "96Gi" }
    }
  }

  gpu {
    count    = 2
    products = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"]
    fit {
      modules {
        name         = "llama-3.1-70b"
        weights_gib  = 70
        kv_cache_gib = 20
        placement    = "sharded"
      }
      shards         = 2
      runtime_gib    = 4
      margin_percent = 10
    }
  }

  replicas {
    min = 1
    max = 1
  }
}

output "capacity_class" {
  value = modelfleet_inference.llama_70b.capacity_class
}

output "per_gpu_memory_gib" {
  value = modelfleet_inference.llama_70b.per_gpu_memory_gib
}
