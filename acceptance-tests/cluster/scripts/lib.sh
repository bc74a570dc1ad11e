# Shared helpers for the control-plane scripts. Sourced, never run.
# shellcheck shell=bash
CLUSTER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_ROOT=$(cd "$CLUSTER_DIR/../.." && pwd)
# shellcheck source=../versions.env
source "$CLUSTER_DIR/versions.env"
export GOTOOLCHAIN=local
MODEL_FLEET_CACHE=${MODEL_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/model-fleet}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

require_go() {
  command -v go >/dev/null 2>&1 || die "Go is not installed or not on PATH. The local control plane is built from the Go module proxy: install Go 1.25 or newer (https://go.dev/doc/install), then rerun."
  local v; v=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
  case "$v" in 1.2[5-9]*|1.[3-9]*) ;; *) die "Go $v is too old: Kubernetes ${KUBERNETES_VERSION} needs Go 1.25 or newer.";; esac
}

# component_bin_dir NAME VERSION: the cache folder holding a component's binaries. The key includes
# a hash of the component's go.mod and go.sum, so editing the pinned module rebuilds it.
component_bin_dir() {
  local name=$1 version=$2 sum
  sum=$(cat "$CLUSTER_DIR/gomod/$name/go.mod" "$CLUSTER_DIR/gomod/$name/go.sum" | sha256sum | cut -c1-12)
  printf '%s/bin/%s-%s-%s' "$MODEL_FLEET_CACHE" "$name" "$version" "$sum"
}
kubernetes_bin_dir() { component_bin_dir kubernetes "$KUBERNETES_VERSION"; }
etcd_bin_dir() { component_bin_dir etcd "$ETCD_VERSION"; }
kwok_bin_dir() { component_bin_dir kwok "$KWOK_VERSION"; }
opentofu_bin_dir() { component_bin_dir opentofu "$OPENTOFU_VERSION"; }

# terraform_bin: the Terraform-compatible CLI every script and test uses, in this order: $TF_BIN;
# `terraform` on PATH; OpenTofu built by `make bootstrap`. Prints nothing and fails when none exists.
terraform_bin() {
  if [ -n "${TF_BIN:-}" ]; then command -v "$TF_BIN" && return; return 1; fi
  command -v terraform && return
  local tofu; tofu="$(opentofu_bin_dir)/tofu"
  [ -x "$tofu" ] && echo "$tofu"
}
