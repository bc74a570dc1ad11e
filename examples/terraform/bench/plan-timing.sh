#!/usr/bin/env bash
# Wall time of `terraform plan` (with refresh) for N modelfleet_inference resources that exist in
# the cluster, next to N terraform_data resources (the same Terraform overhead with no provider
# I/O). Usage:
#   PROVIDER_DIR=<dir with terraform-provider-modelfleet> KUBECONFIG_PATH=<kubeconfig> \
#     examples/terraform/bench/plan-timing.sh N NAMESPACE
# The namespace must exist and the Model Fleet CRDs be installed. Resources are destroyed at the
# end. Prints one line per kind: `<kind> N=<n> plan_seconds=<s>`.
set -euo pipefail
n=${1:?count}
ns=${2:?namespace}
: "${PROVIDER_DIR:?}" "${KUBECONFIG_PATH:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'provider_installation {\n  dev_overrides { "modelfleet/modelfleet" = "%s" }\n  direct {}\n}\n' \
  "$PROVIDER_DIR" >"$work/dev.tfrc"
export TF_CLI_CONFIG_FILE=$work/dev.tfrc TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1

mkdir "$work/inference" "$work/data"
cat >"$work/inference/main.tf" <<TF
terraform {
  required_providers {
    modelfleet = { source = "modelfleet/modelfleet" }
  }
}
provider "modelfleet" {
  kubeconfig_path = "$KUBECONFIG_PATH"
  namespace       = "$ns"
}
resource "modelfleet_inference" "m" {
  count = $n
  name  = "bench-\${count.index}"
  model {
    name = "m"
  }
  container {
    image = "hashicorp/http-echo:1.0"
    resources {
      requests = { cpu = "0.5", memory = "64Mi" }
    }
  }
  gateway {
    hostnames = ["m\${count.index}.localhost"]
  }
}
TF
cat >"$work/data/main.tf" <<TF
resource "terraform_data" "d" {
  count = $n
  input = "bench-\${count.index}"
}
TF

measure() {
  local dir=$1 kind=$2
  (cd "$dir" && terraform init -input=false >/dev/null 2>&1 || true)
  (cd "$dir" && terraform apply -auto-approve -input=false -no-color >/dev/null)
  local start end
  start=$(date +%s.%N)
  (cd "$dir" && terraform plan -detailed-exitcode -input=false -no-color >/dev/null)
  end=$(date +%s.%N)
  echo "$kind N=$n plan_seconds=$(echo "$end - $start" | bc)"
  (cd "$dir" && terraform destroy -auto-approve -input=false -no-color >/dev/null)
}
measure "$work/data" terraform_data
measure "$work/inference" modelfleet_inference
