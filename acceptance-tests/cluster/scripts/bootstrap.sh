#!/usr/bin/env bash
# `make bootstrap`: everything a fresh machine needs before `make test` or `make demo`. Idempotent:
# a second run checks the caches and returns in seconds.
#   - checks the toolchains (Go >= 1.25, the pinned Rust toolchain through rustup, openssl, curl)
#   - builds etcd, kwok, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from the
#     Go module proxy into $MODEL_FLEET_CACHE (cold: about 22 minutes on 2 cores; progress is printed every minute)
#   - fetches the upstream Gateway API and KEDA CRDs
#   - finds a terraform CLI, or builds OpenTofu when there is none
set -euo pipefail
source "$(dirname "$0")/lib.sh"
t0=$SECONDS
require_go
command -v cargo >/dev/null || die "cargo is not on PATH: install Rust with rustup (https://rustup.rs); rust-toolchain.toml pins the version"
for tool in openssl curl python3 jq setsid flock; do
  command -v "$tool" >/dev/null || die "$tool is missing: install it (Debian/Ubuntu: apt-get install $( [ "$tool" = setsid ] || [ "$tool" = flock ] && echo util-linux || echo "$tool"))"
done
log "bootstrap: cache folder $MODEL_FLEET_CACHE"
"$CLUSTER_DIR/scripts/build.sh"
"$CLUSTER_DIR/scripts/upstream-crds.sh" >/dev/null
log "bootstrap: done in $((SECONDS - t0))s"
