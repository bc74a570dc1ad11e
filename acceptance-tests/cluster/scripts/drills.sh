#!/usr/bin/env bash
# `make drills`: the operator fault drills of issue 18 (acceptance-tests/tests/drills_*.rs, one at a time:
# some restart the API server or etcd) on control plane instance NAME (default `drills`; never the demo's or
# `make test`'s), which it starts and stops on every exit path. Prints each drill's DRILL figure line and the wall
# time. Sizes come from the environment: DRILL_BURST, DRILL_STALL_SECONDS, DRILL_LOAD_SERVICES, DRILL_LOAD_RUNS,
# DRILL_SEED (see docs/RELIABILITY.md). Further arguments are test-name filters (any of them matches), e.g.
# `drills.sh drills-ci drill_kill9 drill_stall` (make drills-ci, the bounded subset CI runs).
# The drills are #[ignore]d (make test never runs them on its shared instance); this script runs them with --ignored.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
instance=${1:-drills}
shift || true
filters=("$@")
cd "$REPO_ROOT"
start=$SECONDS
# Every acceptance-tests/tests/drills_*.rs.
drills=()
for f in acceptance-tests/tests/drills_*.rs; do drills+=(--test "$(basename "$f" .rs)"); done
# --workspace: the features unify as for the operator binary the drills build, so nothing is built twice.
cargo build --workspace --bin model-fleet-operator
cargo test --workspace --no-run "${drills[@]}"
trap '"$CLUSTER_DIR/scripts/cluster.sh" down "$instance"' EXIT
"$CLUSTER_DIR/scripts/cluster.sh" up "$instance" >/dev/null
export MODEL_FLEET_INSTANCE=$instance
out=$(mktemp)
status=0
cargo test --workspace --no-fail-fast "${drills[@]}" -- --ignored --nocapture --test-threads=1 "${filters[@]}" 2>&1 | tee "$out" || status=$?
log "figures:"
grep '^DRILL ' "$out" >&2 || true
rm -f "$out"
log "drills $([ "$status" = 0 ] && echo passed || echo FAILED) in $((SECONDS - start))s (wall time, build included)"
exit "$status"
