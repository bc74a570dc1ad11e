# Model Fleet quickstart: what `make demo` applies on the local control plane. The same file targets
# a real cluster: point kubeconfig_path (and kubeconfig_context) at it, and set real_node = false and
# echo_image to an image that cluster can pull (e.g. hashicorp/http-echo:1.0).
#
#   dataset   corpus v3, readable by the `default` ServiceAccount
#   echo      an echo server (our image modelfleet.local/echo) on the local cluster's real node
#             real-1, at http://model.localhost/ on the shared Gateway
#   vllm      a vLLM OpenAI server that scales to zero on a Redis queue (KEDA), 1 GPU of class 24gi
#   llama     the worked multi-GPU fit: 54 GiB per GPU over 2 GPUs -> class 80gi
#   fit_141   a fit that needs 141gi GPUs: no such node here, so it stays Pending
#   finetune  a training run reading the dataset, applied until it completes
terraform {
  required_providers {
    modelfleet = { source = "modelfleet/modelfleet" }
  }
}

variable "kubeconfig_path" {
  description = "Kubeconfig of the cluster (make demo passes the local control plane's)."
  type        = string
}

variable "kubeconfig_context" {
  description = "Context in the kubeconfig; null uses its current context."
  type        = string
  default     = null
}

variable "echo_image" {
  description = "Image of the echo service: modelfleet.local/echo is built by make bootstrap and served by the local cluster's real node; elsewhere use e.g. hashicorp/http-echo:1.0 (same flags)."
  type        = string
  default     = "modelfleet.local/echo:0.1"
}

variable "real_node" {
  description = "Place the echo service on the local cluster's real node real-1 (the only local node that runs containers). make demo sets false when the machine cannot run one; set false on other clusters."
  type        = bool
  default     = true
}

variable "namespace" {
  description = "Namespace the resources live in (must exist)."
  type        = string
  default     = "demo"
}

provider "modelfleet" {
  kubeconfig_path    = var.kubeconfig_path
  kubeconfig_context = var.kubeconfig_context
  namespace          = var.namespace
}

resource "modelfleet_dataset" "corpus" {
  name        = "corpus-v3"
  version     = "3"
  format      = "parquet"
  description = "Deduplicated instruction corpus, third cut"
  source {
    uri = "s3://datasets/corpus/v3/"
  }
  splits "train" {
    uri     = "s3://datasets/corpus/v3/train/"
    records = 1200000
  }
  splits "eval" {
    uri     = "s3://datasets/corpus/v3/eval/"
    records = 12000
  }
  allowed_service_accounts = ["default"]
}

resource "modelfleet_inference" "echo" {
  name     = "echo"
  wait_for = "ready"
  model {
    name = "echo"
  }
  container {
    image          = var.echo_image
    args           = ["-listen=:8080", "-text=hello from model fleet"]
    port           = 8080
    readiness_path = "/"
    resources {
      requests = { cpu = "100m", memory = "64Mi" }
    }
  }
  # real-1 carries the label modelfleet.io/real-node=true and a NoSchedule taint of that key, so
  # only pods asking for it land there. The API's placement fields (node_selector, tolerations)
  # live in the gpu block; count = 0 asks for no GPU.
  dynamic "gpu" {
    for_each = var.real_node ? [1] : []
    content {
      count         = 0
      node_selector = { "modelfleet.io/real-node" = "true" }
      tolerations {
        key      = "modelfleet.io/real-node"
        operator = "Exists"
        effect   = "NoSchedule"
      }
    }
  }
  replicas {
    min = 2
    max = 2
  }
  gateway {
    hostnames = ["model.localhost"]
  }
  timeouts {
    create = "3m"
    update = "3m"
  }
}

resource "modelfleet_inference" "vllm" {
  name     = "vllm"
  wait_for = "reconciled"
  model {
    name        = "Qwen/Qwen2.5-7B-Instruct"
    served_name = "qwen-7b"
  }
  container {
    image          = "vllm/vllm-openai:v0.8.5"
    args           = ["--model=$(MODEL_FLEET_MODEL_NAME)", "--served-model-name=$(MODEL_FLEET_SERVED_MODEL_NAME)", "--port=8000"]
    port           = 8000
    readiness_path = "/health"
  }
  gpu {
    count = 1
    fit {
      modules {
        name         = "qwen2.5-7b"
        weights_gib  = 15
        kv_cache_gib = 3
        placement    = "sharded"
      }
    }
  }
  replicas {
    min = 0
    max = 4
  }
  scaling {
    triggers {
      type     = "redis"
      metadata = { address = "redis.queue:6379", listName = "vllm-requests", listLength = "8" }
    }
    cooldown_period = 300
  }
  gateway {
    hostnames   = ["model.localhost"]
    path_prefix = "/v1"
  }
}

resource "modelfleet_inference" "llama" {
  name     = "llama-70b"
  intent   = "active"
  wait_for = "ready"
  model {
    name = "meta-llama/Llama-3.1-70B-Instruct"
  }
  container {
    image = "vllm/vllm-openai:v0.8.5"
    args  = ["--model=$(MODEL_FLEET_MODEL_NAME)", "--tensor-parallel-size=2", "--port=8000"]
    port  = 8000
  }
  gpu {
    count = 2
    fit {
      modules {
        name         = "llama-3.1-70b"
        weights_gib  = 70
        kv_cache_gib = 20
        placement    = "sharded"
      }
      runtime_gib    = 4
      margin_percent = 10
    }
  }
  replicas {
    min = 1
    max = 1
  }
  timeouts {
    create = "3m"
  }
}

resource "modelfleet_inference" "fit_141" {
  name   = "fit-141"
  intent = "active"
  model {
    name = "meta-llama/Llama-3.1-405B-Instruct-FP8"
  }
  container {
    image = "vllm/vllm-openai:v0.8.5"
    args  = ["--model=$(MODEL_FLEET_MODEL_NAME)", "--tensor-parallel-size=4", "--port=8000"]
    port  = 8000
  }
  gpu {
    count = 4
    fit {
      modules {
        name         = "llama-3.1-405b-fp8"
        weights_gib  = 405
        kv_cache_gib = 60
        placement    = "sharded"
      }
    }
  }
  replicas {
    min = 1
    max = 1
  }
}

resource "modelfleet_training" "finetune" {
  name     = "finetune-1"
  wait_for = "completed"
  container {
    image   = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
    command = ["python", "-m", "train", "--data=/data/corpus"]
  }
  gpu {
    count = 1
    fit {
      modules {
        name         = "qwen2.5-7b-lora"
        weights_gib  = 15
        kv_cache_gib = 3
        placement    = "sharded"
      }
    }
  }
  datasets {
    name       = modelfleet_dataset.corpus.name
    version    = modelfleet_dataset.corpus.version
    mount_path = "/data/corpus"
  }
  retries          = 1
  deadline_seconds = 3600
  timeouts {
    create = "3m"
  }
}

output "urls" {
  description = "Where each routed service answers (through the shared Gateway)."
  value = {
    echo = modelfleet_inference.echo.url
    vllm = modelfleet_inference.vllm.url
  }
}

output "capacity" {
  description = "GPU class and per-GPU memory budget (GiB) of each GPU workload, known at plan time."
  value = {
    vllm     = { class = modelfleet_inference.vllm.capacity_class, per_gpu_memory_gib = modelfleet_inference.vllm.per_gpu_memory_gib }
    llama    = { class = modelfleet_inference.llama.capacity_class, per_gpu_memory_gib = modelfleet_inference.llama.per_gpu_memory_gib }
    fit_141  = { class = modelfleet_inference.fit_141.capacity_class, per_gpu_memory_gib = modelfleet_inference.fit_141.per_gpu_memory_gib }
    finetune = { class = modelfleet_training.finetune.capacity_class, per_gpu_memory_gib = modelfleet_training.finetune.per_gpu_memory_gib }
  }
}

output "training" {
  description = "The training run's Job and phase."
  value = {
    job_name = modelfleet_training.finetune.job_name
    phase    = modelfleet_training.finetune.phase
  }
}
