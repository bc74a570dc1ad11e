#!/usr/bin/env bash
# Prints the path of the Terraform CLI that scripts and tests use (see terraform_bin in lib.sh;
# MODEL_FLEET_TF_CLI=terraform|tofu picks it).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case "${MODEL_FLEET_TF_CLI:-terraform}" in
  terraform)
    terraform_bin || die "no Terraform CLI: set TF_BIN, install terraform 1.11 (https://developer.hashicorp.com/terraform/install), or run 'make bootstrap' to build OpenTofu ${OPENTOFU_VERSION} from the Go module proxy" ;;
  tofu)
    terraform_bin || die "MODEL_FLEET_TF_CLI=tofu but OpenTofu is missing: neither $(opentofu_bin_dir)/tofu nor tofu on PATH; run 'make bootstrap' (it builds OpenTofu ${OPENTOFU_VERSION} from the Go module proxy)" ;;
  *) die "MODEL_FLEET_TF_CLI=${MODEL_FLEET_TF_CLI}: expected terraform or tofu" ;;
esac
