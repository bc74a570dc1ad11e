#!/usr/bin/env bash
# `make bench` (issue 17): release builds of the operator and the provider, hashicorp/kubernetes (the peer) from the
# Go module proxy, a private control plane instance (default `bench`, simulated nodes only so no container competes
# for the CPU), then
#   provider.sh      terraform apply/plan of N modelfleet_inference vs N terraform_data vs N kubernetes_manifest,
#   bench-operator   cold convergence of N InferenceServices vs a plain client applying the same children,
# and report.py's tables with every target of the issue marked `holds` or `MISSED`. The instance is stopped on every
# exit path. Figures are whole-process wall times on a shared machine: quote ratios measured in one run.
#
# Usage: bench.sh [all|provider|operator] (default all).
# Environment: BENCH_PROVIDER_N (default "100 500 1000"), BENCH_OPERATOR_N (default "100,300,1000,3000"),
# BENCH_OPERATOR_REPEAT (runs of each operator N, the median run reported; default 1),
# BENCH_INSTANCE (default bench), BENCH_RESULTS (default .local/bench-results/results-<time>.jsonl; appended to;
# not under .local/<instance>, which the instance's stop deletes).
set -euo pipefail
source "$(dirname "$0")/../cluster/scripts/lib.sh"
cd "$REPO_ROOT"
part=${1:-all}
case $part in all|provider|operator) ;; *) die "bench.sh: expected all, provider or operator, not '$part'" ;; esac
instance=${BENCH_INSTANCE:-bench}
mkdir -p .local/bench-results
results=${BENCH_RESULTS:-$REPO_ROOT/.local/bench-results/results-$(date +%Y%m%dT%H%M%S).jsonl}
read -r -a provider_sizes <<<"${BENCH_PROVIDER_N:-100 500 1000}"
operator_sizes=${BENCH_OPERATOR_N:-100,300,1000,3000}
start=$SECONDS

log "bench: release builds"
cargo build --release -p terraform-provider-modelfleet -p model-fleet-operator
cargo build --release -p acceptance-tests --bin bench-operator
acceptance-tests/infra/scripts/build.sh kubernetes-provider
acceptance-tests/infra/scripts/build.sh plugin-floor

trap '"$CLUSTER_DIR/scripts/cluster.sh" down "$instance" >/dev/null 2>&1 || true' EXIT
MODEL_FLEET_REAL_NODE=0 "$CLUSTER_DIR/scripts/cluster.sh" up "$instance" >/dev/null
kubectl=(".local/$instance/bin/kubectl" --kubeconfig ".local/$instance/kubeconfig")
"${kubectl[@]}" apply --server-side -f charts/model-fleet-operator/crds/ >/dev/null
"${kubectl[@]}" wait --for=condition=Established -f charts/model-fleet-operator/crds/ --timeout=60s >/dev/null

{
  printf '{"bench":"machine","date":"%s","cores":%s,"memory_gib":%s,"commit":"%s","tf":"%s"}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(nproc)" "$(awk '/MemTotal/{printf "%d", $2/1048576}' /proc/meminfo)" \
    "$(git rev-parse --short HEAD)" "$("$CLUSTER_DIR/scripts/tf-bin.sh")"
} >>"$results"
if [ "$part" != operator ]; then
  log "bench: provider (N = ${provider_sizes[*]})"
  bash acceptance-tests/bench/provider.sh "$instance" "$results" "${provider_sizes[@]}"
fi
if [ "$part" != provider ]; then
  log "bench: operator (N = $operator_sizes)"
  MODEL_FLEET_INSTANCE=$instance "${CARGO_TARGET_DIR:-target}/release/bench-operator" \
    --n "$operator_sizes" --repeat "${BENCH_OPERATOR_REPEAT:-1}" --json "$results"
fi

python3 acceptance-tests/bench/report.py "$results"
log "bench: results in $results; took $((SECONDS - start))s"
