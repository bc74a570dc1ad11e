#!/usr/bin/env bash
# `make test`: builds the workspace, starts control plane instance NAME (default `test`; never the
# demo's), runs every unit and control-plane test with `cargo test --workspace`, and stops the
# instance on every exit path.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
instance=${1:-test}
cd "$REPO_ROOT"
cargo build --workspace --all-targets
trap '"$CLUSTER_DIR/scripts/cluster.sh" down "$instance"' EXIT
"$CLUSTER_DIR/scripts/cluster.sh" up "$instance" >/dev/null
export MODEL_FLEET_INSTANCE=$instance
cargo test --workspace --no-fail-fast
