#!/usr/bin/env bash
# Builds the local control plane's binaries from the Go module proxy at the versions pinned in
# versions.env, into ${XDG_CACHE_HOME:-$HOME/.cache}/model-fleet/bin/<component>-<version>-<hash>/.
#
# Idempotent (a component already in the cache is skipped in milliseconds) and safe to interrupt:
# each component is built into a temporary folder and renamed into place only when complete, under
# a lock so two builds never race. Prints what it does, the time each build took and its peak memory.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require_go
mkdir -p "$MODEL_FLEET_CACHE/bin"
exec 9>"$MODEL_FLEET_CACHE/bin/.build.lock"
flock 9

# progress LABEL LOG TOTAL: every 60 s, how many of TOTAL packages `go build -v` has compiled so far.
progress() {
  local start; start=$(date +%s)
  while sleep 60; do
    local done_; done_=$(grep -c '^[^ ]*$' "$2" 2>/dev/null) || done_=0
    log "$1: $done_ of about $3 packages compiled ($((done_ * 100 / ($3 > 0 ? $3 : 1)))%), $((($(date +%s) - start) / 60)) min so far"
  done
}

# build_component NAME VERSION LDFLAGS PACKAGE... : go build PACKAGES into the component's cache dir.
build_component() {
  local name=$1 version=$2 ldflags=$3; shift 3
  local dest; dest=$(component_bin_dir "$name" "$version")
  if [ -f "$dest/.complete" ]; then
    log "$name $version: cached in $dest"
    return
  fi
  local tmp="$dest.partial.$$" beat=""
  rm -rf "$tmp"; mkdir -p "$tmp"
  trap 'rm -rf "$tmp"; [ -z "$beat" ] || kill "$beat" 2>/dev/null' EXIT
  log "$name $version: fetching modules and listing packages"
  local packages; packages=$(cd "$CLUSTER_DIR/gomod/$name" && go list -deps "$@" 2>"$tmp/list.log" | wc -l) ||
    { tail -n 20 "$tmp/list.log" >&2; die "$name $version: listing packages failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"; }
  log "$name $version: building $* ($packages packages; cold builds take minutes, Kubernetes about 17 min on 2 cores)"
  local start=$SECONDS
  progress "$name $version" "$tmp/build.log" "$packages" &
  beat=$!
  # -v names each package as it is compiled (the progress count); errors land in the same log.
  (cd "$CLUSTER_DIR/gomod/$name" && CGO_ENABLED=0 /usr/bin/time -f '%M' -o "$tmp/.maxrss" \
    go build -v -trimpath -ldflags "-s -w $ldflags" -o "$tmp/" "$@") 2>"$tmp/build.log" ||
    { tail -n 40 "$tmp/build.log" >&2; die "$name $version: go build failed (output above)"; }
  kill "$beat" 2>/dev/null || true
  # Go names a binary after its package path's last element that is not a major version: etcd's
  # main package go.etcd.io/etcd/server/v3 becomes `server`.
  [ "$name" = etcd ] && mv "$tmp/server" "$tmp/etcd"
  local secs=$((SECONDS - start)) rss_kib; rss_kib=$(tail -n1 "$tmp/.maxrss")
  printf 'seconds=%s\npeak_rss_mib=%s\n' "$secs" "$((rss_kib / 1024))" >"$tmp/.build-stats"
  touch "$tmp/.complete"
  rm -rf "$dest"; mv "$tmp" "$dest"
  trap - EXIT
  log "$name $version: built in ${secs}s, peak memory $((rss_kib / 1024)) MiB -> $dest"
}

k8s_minor=${KUBERNETES_VERSION#v1.}; k8s_minor=${k8s_minor%%.*}
k8s_ldflags="-X k8s.io/component-base/version.gitVersion=${KUBERNETES_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${k8s_minor} -X k8s.io/client-go/pkg/version.gitVersion=${KUBERNETES_VERSION} -X k8s.io/component-base/version.gitTreeState=clean"

total=$SECONDS
build_component etcd "$ETCD_VERSION" "" go.etcd.io/etcd/server/v3
build_component kwok "$KWOK_VERSION" "-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION}" sigs.k8s.io/kwok/cmd/kwok
build_component kubernetes "$KUBERNETES_VERSION" "$k8s_ldflags" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
# The Terraform CLI: an installed terraform (or $TF_BIN) wins; otherwise build OpenTofu.
if tf=$(terraform_bin) && [ "$tf" != "$(opentofu_bin_dir)/tofu" ]; then
  log "terraform CLI: $tf"
else
  build_component opentofu "$OPENTOFU_VERSION" "" github.com/opentofu/opentofu/cmd/tofu
  log "terraform CLI: $(opentofu_bin_dir)/tofu (OpenTofu; no terraform on PATH)"
fi
log "control plane binaries ready in $((SECONDS - total))s"
