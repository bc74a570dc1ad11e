# Reads objects this configuration does not manage (another workspace, a GitOps tool or kubectl created them):
# a service's URL and readiness for a route or a monitor, a run's Job for log links, a Dataset's version. Data
# sources never write; a missing object fails the plan, naming it.
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

variable "service" {
  type        = string
  description = "Name of the InferenceService to read."
}

variable "run" {
  type        = string
  description = "Name of the TrainingRun to read."
}

variable "dataset" {
  type        = string
  description = "Name of the Dataset to read."
}

provider "modelfleet" {
  kubeconfig_path = var.kubeconfig_path
  namespace       = var.namespace
}

data "modelfleet_inference" "service" {
  name = var.service
}

data "modelfleet_training" "run" {
  name = var.run
}

data "modelfleet_dataset" "corpus" {
  name = var.dataset
}

output "service_url" {
  value = data.modelfleet_inference.service.url
}

output "service_ready" {
  value = data.modelfleet_inference.service.ready
}

output "service_image" {
  value = data.modelfleet_inference.service.container.image
}

# `gateway` is null on a service without one: try() keeps the output valid then.
output "service_hostnames" {
  value = try(data.modelfleet_inference.service.gateway.hostnames, [])
}

output "run_job" {
  value = data.modelfleet_training.run.job_name
}

output "run_phase" {
  value = data.modelfleet_training.run.phase
}

output "dataset_version" {
  value = data.modelfleet_dataset.corpus.version
}

output "dataset_splits" {
  value = keys(data.modelfleet_dataset.corpus.splits)
}
