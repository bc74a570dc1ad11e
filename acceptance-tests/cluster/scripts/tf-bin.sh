#!/usr/bin/env bash
# Prints the path of the Terraform CLI that scripts and tests use (see terraform_bin in lib.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
terraform_bin || die "no Terraform CLI: set TF_BIN, install terraform 1.11 (https://developer.hashicorp.com/terraform/install), or run 'make bootstrap' to build OpenTofu ${OPENTOFU_VERSION} from the Go module proxy"
