# Shared helpers for the infrastructure scripts (terraform/ and modules/). Sourced, never run.
# shellcheck shell=bash
INFRA_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# log, die, require_go, terraform_bin, MODEL_FLEET_CACHE, REPO_ROOT come from the control plane's helpers.
# shellcheck source=../../cluster/scripts/lib.sh
source "$INFRA_DIR/../cluster/scripts/lib.sh"
# shellcheck source=../versions.env
source "$INFRA_DIR/versions.env"

# The filesystem mirror `terraform init -plugin-dir=...` installs the providers from.
TF_MIRROR="$MODEL_FLEET_CACHE/terraform-mirror"

# infra_bin_dir NAME VERSION: cache folder of one built tool, keyed by its go.mod and go.sum.
infra_bin_dir() {
  local name=$1 version=$2 sum
  sum=$(cat "$INFRA_DIR/gomod/$name/go.mod" "$INFRA_DIR/gomod/$name/go.sum" | sha256sum | cut -c1-12)
  printf '%s/bin/infra-%s-%s-%s' "$MODEL_FLEET_CACHE" "$name" "$version" "$sum"
}
# The plugin floor's version: its source's hash (its go.mod and go.sum key the folder, main.go this).
plugin_floor_version() { printf 'src-%s' "$(sha256sum "$INFRA_DIR/gomod/plugin-floor/main.go" | cut -c1-12)"; }
plugin_floor_bin() { printf '%s/terraform-provider-floor' "$(infra_bin_dir plugin-floor "$(plugin_floor_version)")"; }
tflint_bin() { printf '%s/tflint' "$(infra_bin_dir tflint "$TFLINT_VERSION")"; }
kind_bin() { printf '%s/kind' "$(infra_bin_dir kind "$KIND_VERSION")"; }
helm_bin() { printf '%s/helm' "$(infra_bin_dir helm-cli "$HELM_CLI_VERSION")"; }
