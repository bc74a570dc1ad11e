# A Dataset version and a TrainingRun that reads it. The run's ServiceAccount (`default` when
# absent) must be in the Dataset's allowed_service_accounts; apply waits until the run succeeded.
# Any change other than intent or cancel replaces the run (a new attempt is a new run).
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

variable "image" {
  type    = string
  default = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
}

provider "modelfleet" {
  kubeconfig_path = var.kubeconfig_path
  namespace       = var.namespace
}

resource "modelfleet_dataset" "corpus" {
  name    = "corpus-v3"
  version = "3"
  format  = "parquet"
  source {
    uri = "s3://datasets/corpus/v3/"
  }
  splits "train" {
    uri     = "s3://datasets/corpus/v3/train/"
    records = 1200000
  }
  allowed_service_accounts = ["default"]
}

resource "modelfleet_training" "finetune" {
  name     = "finetune-1"
  wait_for = "completed"

  container {
    image   = var.image
    command = ["python", "-m", "train"]
    resources {
      requests = { cpu = "0.5", memory = "1Gi" }
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

output "job_name" {
  value = modelfleet_training.finetune.job_name
}
