#!/usr/bin/env bash
# `make test`: builds the workspace, starts control plane instance NAME (default `test`; never the
# demo's), runs every unit and control-plane test with `cargo test --workspace`, then runs the
# provider's end-to-end tests again with OpenTofu (MODEL_FLEET_TF_CLI=tofu) on the same instance,
# and stops the instance on every exit path. Fails when either run fails or OpenTofu is missing.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
instance=${1:-test}
cd "$REPO_ROOT"
# The provider's end-to-end test binaries, the ones that drive the Terraform CLI: every
# acceptance-tests/tests/provider_*.rs, provider/tests/terraform_cli.rs and provider/tests/invalid_configs.rs.
provider_e2e=(--test terraform_cli --test invalid_configs)
for f in acceptance-tests/tests/provider_*.rs; do provider_e2e+=(--test "$(basename "$f" .rs)"); done
# Checked before anything runs: a missing OpenTofu is a setup error, not a late surprise.
MODEL_FLEET_TF_CLI=tofu "$CLUSTER_DIR/scripts/tf-bin.sh" >/dev/null ||
  die "make test also runs the provider's end-to-end tests with OpenTofu: run 'make bootstrap' to build it"
cargo build --workspace --all-targets
trap '"$CLUSTER_DIR/scripts/cluster.sh" down "$instance"' EXIT
"$CLUSTER_DIR/scripts/cluster.sh" up "$instance" >/dev/null
export MODEL_FLEET_INSTANCE=$instance
status=0
cargo test --workspace --no-fail-fast || status=$?

tofu=$(MODEL_FLEET_TF_CLI=tofu "$CLUSTER_DIR/scripts/tf-bin.sh")
log "OpenTofu: the provider's end-to-end tests again with $tofu (MODEL_FLEET_TF_CLI=tofu)"
# --workspace with only these --test targets: the features unify as in the run above, so the
# binaries are the ones just built (with -p, Cargo would rebuild some dependencies).
start=$SECONDS tofu_status=0
MODEL_FLEET_TF_CLI=tofu cargo test --workspace --no-fail-fast "${provider_e2e[@]}" || tofu_status=$?
log "OpenTofu: provider end-to-end tests $([ "$tofu_status" = 0 ] && echo passed || echo FAILED) in $((SECONDS - start))s"
[ "$status" = 0 ] || die "cargo test --workspace failed (Terraform run; output above)"
[ "$tofu_status" = 0 ] || die "the provider's end-to-end tests failed with OpenTofu (output above)"
