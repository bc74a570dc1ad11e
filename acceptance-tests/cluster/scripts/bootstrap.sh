#!/usr/bin/env bash
# `make bootstrap`: everything a fresh machine needs before `make test` or `make demo`. Idempotent:
# a second run checks the caches and returns in seconds.
#   - checks the toolchains (Go >= 1.25, the pinned Rust toolchain through rustup, openssl, curl)
#   - builds etcd, kwok, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from the
#     Go module proxy into $MODEL_FLEET_CACHE (cold: about 22 minutes on 2 cores; progress is printed every minute)
#   - fetches the upstream Gateway API and KEDA CRDs
#   - builds OpenTofu (always: `make test` runs the provider's end-to-end tests with it as well as
#     with terraform; it is also the Terraform CLI where no terraform is installed)
#   - for the real node `real-1`: installs Debian's runc, nftables (kube-proxy's nftables mode) and
#     socat when missing (root only), builds kubelet, kube-proxy, containerd, the CNI plugins and
#     crane, and our images (images/); MODEL_FLEET_REAL_NODE=0 skips all of it
set -euo pipefail
source "$(dirname "$0")/lib.sh"
t0=$SECONDS
require_go
command -v cargo >/dev/null || die "cargo is not on PATH: install Rust with rustup (https://rustup.rs); rust-toolchain.toml pins the version"
for tool in openssl curl python3 jq setsid flock; do
  command -v "$tool" >/dev/null || die "$tool is missing: install it (Debian/Ubuntu: apt-get install $( [ "$tool" = setsid ] || [ "$tool" = flock ] && echo util-linux || echo "$tool"))"
done
log "bootstrap: cache folder $MODEL_FLEET_CACHE"

# install_node_packages: Debian packages of the real node (DEBIAN_NODE_PACKAGES in versions.env),
# installed only when missing, so a warm bootstrap does not touch apt.
install_node_packages() {
  local missing=() p
  for p in $DEBIAN_NODE_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && { log "real node: Debian packages present ($DEBIAN_NODE_PACKAGES)"; return; }
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    log "real node: missing ${missing[*]} and cannot install them here (needs root and apt-get): the local cluster runs without a real node (install them, then rerun make bootstrap)"
    return
  fi
  log "real node: installing ${missing[*]} (apt-get)"
  apt-get update -qq >/dev/null || die "apt-get update failed: the real node needs the Debian packages ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install ${missing[*]} failed (the real node needs them; MODEL_FLEET_REAL_NODE=0 skips the node)"
}
if [ "${MODEL_FLEET_REAL_NODE:-auto}" != 0 ] && command -v dpkg-query >/dev/null; then
  install_node_packages
fi
"$CLUSTER_DIR/scripts/build.sh"
"$REPO_ROOT/acceptance-tests/infra/scripts/build.sh" # Terraform providers and tflint for terraform/ and modules/
"$CLUSTER_DIR/scripts/upstream-crds.sh" >/dev/null
log "bootstrap: done in $((SECONDS - t0))s"
