#!/usr/bin/env bash
# `make kind-up` / `make kind-status` / `make kind-down`: the disposable kind cluster of
# terraform/kind (one control-plane node, one worker, Cilium, Gateway API, KEDA, Model Fleet).
#
#   kind.sh up       checks for a container engine first (kind's nodes are containers) and stops
#                    at once without one; then builds the providers and the kind CLI (cached),
#                    fetches the Gateway API CRDs and applies terraform/kind in two steps: the
#                    cluster alone (the providers read the kubeconfig kind writes), then the rest
#   kind.sh status   the cluster's nodes and Model Fleet's pods, or why there is none
#   kind.sh down     terraform destroy (deletes the cluster)
#
# State lives in .local/kind/ (git-ignored). MODEL_FLEET_CONTAINER_ENGINES (default
# "docker podman nerdctl") lists the engines looked for, in kind's order of preference.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cmd=${1:-}
state="$REPO_ROOT/.local/kind"
engines=${MODEL_FLEET_CONTAINER_ENGINES:-docker podman nerdctl}

# container_engine: prints the first engine that is installed and answers; fails with the reason.
container_engine() {
  local e found="" why=""
  for e in $engines; do
    command -v "$e" >/dev/null 2>&1 || continue
    found="$found $e"
    local out
    if out=$("$e" info 2>&1); then echo "$e"; return 0; fi
    why="$why; '$e info' says: $(printf '%s' "$out" | grep -v '^[[:space:]]*$' | tail -n1)"
  done
  if [ -n "$found" ]; then
    echo "the client${found} is installed but no engine daemon answers${why}"
  else
    echo "no container engine is installed (looked for: $engines on PATH)"
  fi
  return 1
}

refuse() {
  die "make kind-up needs a container engine for kind's node containers (Docker, Podman or nerdctl): $1.
  Install one (kind supports docker, podman and nerdctl) and rerun make kind-up, or run
  make demo, which needs no container engine: the same operator and provider on a local control
  plane built from source, with simulated GPU nodes."
}

tf_env() {
  export TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1 TF_DATA_DIR="$state/terraform"
  mkdir -p "$state"
  [ -f "$state/cli.tfrc" ] || printf '' >"$state/cli.tfrc"
  export TF_CLI_CONFIG_FILE="$state/cli.tfrc"
}

tf_vars() {
  local crds; crds=$("$REPO_ROOT/acceptance-tests/cluster/scripts/upstream-crds.sh")
  cat >"$state/kind.auto.tfvars.json" <<JSON
{
  "kind_bin": "$(kind_bin)",
  "kubeconfig_path": "$state/kubeconfig",
  "gateway_api_crds_dir": "$crds/gateway-api"
}
JSON
}

tf() { "$(terraform_bin)" -chdir="$REPO_ROOT/terraform/kind" "$@" -var-file="$state/kind.auto.tfvars.json" -state="$state/terraform.tfstate"; }

case $cmd in
  up)
    engine=$(container_engine) || refuse "$engine"
    log "kind-up: container engine $engine"
    "$INFRA_DIR/scripts/build.sh"
    "$INFRA_DIR/scripts/build.sh" kind
    tf_env; tf_vars
    "$(terraform_bin)" -chdir="$REPO_ROOT/terraform/kind" init -input=false -plugin-dir="$TF_MIRROR" >/dev/null
    # Step 1: the cluster alone, so the helm and kubectl providers find its kubeconfig in step 2.
    tf apply -input=false -auto-approve -target=terraform_data.cluster
    tf apply -input=false -auto-approve
    log "kind-up: done. export KUBECONFIG=$state/kubeconfig; curl -H 'Host: model.localhost' http://127.0.0.1:8080/"
    ;;
  status)
    if ! engine=$(container_engine); then
      log "kind-status: no kind cluster can exist here: $engine (make demo runs without one)"
      exit 0
    fi
    [ -f "$state/kubeconfig" ] || { log "kind-status: no cluster (make kind-up creates it)"; exit 0; }
    KUBECONFIG="$state/kubeconfig" "$(kind_bin)" get nodes --name model-fleet
    command -v kubectl >/dev/null && KUBECONFIG="$state/kubeconfig" kubectl get pods -A -o wide
    ;;
  down)
    if [ ! -f "$state/terraform.tfstate" ]; then
      log "kind-down: no cluster was created here (nothing to destroy)"
      exit 0
    fi
    engine=$(container_engine) || die "kind-down: the cluster's state exists but $engine; start the engine, then rerun make kind-down"
    tf_env; tf_vars
    tf destroy -input=false -auto-approve
    rm -rf "$state"
    ;;
  *) die "usage: kind.sh up|status|down" ;;
esac
