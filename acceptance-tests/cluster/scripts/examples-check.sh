#!/usr/bin/env bash
# `make examples-check` (issue 21): every example under examples/ renders with `render -f` (no cluster), then, on a
# private control plane instance NAME (default `examples`, stopped on every exit path), the catalog's manifests
# (examples/huggingface, examples/qwen) and the older ones reach their expected state and the Terraform examples of
# the catalog apply and plan clean.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
instance=${1:-examples}
cd "$REPO_ROOT"
start=$SECONDS
cargo test -p model-fleet-operator --test render every_example_renders
cargo build --workspace --all-targets
trap '"$CLUSTER_DIR/scripts/cluster.sh" down "$instance"' EXIT
"$CLUSTER_DIR/scripts/cluster.sh" up "$instance" >/dev/null
MODEL_FLEET_INSTANCE=$instance cargo test -p acceptance-tests --test examples_catalog --test operator_examples
log "examples-check: passed in $((SECONDS - start))s"
