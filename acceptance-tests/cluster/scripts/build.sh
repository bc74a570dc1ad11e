#!/usr/bin/env bash
# Builds the local control plane's binaries from the Go module proxy at the versions pinned in
# versions.env, into ${XDG_CACHE_HOME:-$HOME/.cache}/model-fleet/bin/<component>-<version>-<hash>/,
# then crane, then the real node's (kubelet, kube-proxy, containerd, CNI plugins) and our images
# (images/: modelfleet.local/pause and modelfleet.local/echo) into $MODEL_FLEET_CACHE/images/<hash>/.
# MODEL_FLEET_REAL_NODE=0 skips the node's parts (crane is built anyway: make image needs it).
#
# Idempotent (a component already in the cache is skipped in milliseconds) and safe to interrupt:
# each component is built into a temporary folder and renamed into place only when complete, under
# a lock so two builds never race. Prints what it does, the time each build took and its peak memory.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require_go
mkdir -p "$MODEL_FLEET_CACHE/bin" "$MODEL_FLEET_CACHE/images"
# Our images have their own lock: rebuilding them never waits for a long control plane build.
if [ "${1:-}" = --images ]; then exec 9>"$MODEL_FLEET_CACHE/images/.build.lock"; else exec 9>"$MODEL_FLEET_CACHE/bin/.build.lock"; fi
flock 9

# progress LABEL LOG TOTAL: every 60 s, how many of TOTAL packages `go build -v` has compiled so far.
progress() {
  local start; start=$(date +%s)
  while sleep 60; do
    local done_; done_=$(grep -c '^[^ ]*$' "$2" 2>/dev/null) || done_=0
    log "$1: $done_ of about $3 packages compiled ($((done_ * 100 / ($3 > 0 ? $3 : 1)))%), $((($(date +%s) - start) / 60)) min so far"
  done
}

# build_component NAME VERSION LDFLAGS PACKAGE... : go build PACKAGES of module gomod/NAME into the
# component's cache dir, with build tags $BUILD_TAGS when set.
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
    go build -v -trimpath -tags "${BUILD_TAGS:-}" -ldflags "-s -w $ldflags" -o "$tmp/" "$@") 2>"$tmp/build.log" ||
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

# build_images: our static binaries (images/, standard library only) and one OCI tarball per
# NODE_IMAGES entry, made by images/image.sh with crane. Cached like the binaries.
build_images() {
  local dest; dest=$(images_dir)
  if [ -f "$dest/.complete" ]; then
    log "images: cached in $dest"
    return
  fi
  local tmp="$dest.partial.$$" start=$SECONDS entry
  rm -rf "$tmp"; mkdir -p "$tmp/bin"
  (cd "$REPO_ROOT/images" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/bin/" ./...) ||
    die "images: go build of images/ failed (output above)"
  for entry in "${NODE_IMAGES[@]}"; do
    read -r image binary <<<"$entry"
    "$REPO_ROOT/images/image.sh" build "$tmp/bin/$binary" "/$binary" "modelfleet.local/$image" "$tmp/${image%%:*}.tar"
  done
  touch "$tmp/.complete"
  rm -rf "$dest"; mv "$tmp" "$dest"
  log "images: built in $((SECONDS - start))s -> $dest"
}

# `build.sh --images`: only our images (seconds; cluster.sh runs it when images/ changed).
if [ "${1:-}" = --images ]; then
  [ -f "$(crane_bin_dir)/.complete" ] || die "crane is missing: run 'make bootstrap'"
  build_images
  exit 0
fi

total=$SECONDS
build_component etcd "$ETCD_VERSION" "" go.etcd.io/etcd/server/v3
build_component kwok "$KWOK_VERSION" "-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION}" sigs.k8s.io/kwok/cmd/kwok
build_component kubernetes "$KUBERNETES_VERSION" "$k8s_ldflags" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
# OpenTofu is always built: `make test` runs the provider's end-to-end tests with it as well as
# with terraform (MODEL_FLEET_TF_CLI=tofu), and it is the Terraform CLI where no terraform is installed.
# version.dev=no as in OpenTofu's release builds: `tofu version` says v1.10.10, not v1.10.10-dev.
build_component opentofu "$OPENTOFU_VERSION" "-X github.com/opentofu/opentofu/version.dev=no" github.com/opentofu/opentofu/cmd/tofu
if tf=$(terraform_bin) && [ "$tf" != "$(opentofu_bin_dir)/tofu" ]; then
  log "terraform CLI: $tf; OpenTofu: $(opentofu_bin_dir)/tofu"
else
  log "terraform CLI: $(opentofu_bin_dir)/tofu (OpenTofu; no terraform on PATH)"
fi
log "control plane binaries ready in $((SECONDS - total))s"

# crane packs our images for the real node and for `make image` / `make image-push`, which need it without a node.
build_component crane "$CRANE_VERSION" "-X github.com/google/go-containerregistry/cmd/crane/cmd.Version=${CRANE_VERSION}" \
  github.com/google/go-containerregistry/cmd/crane

if [ "${MODEL_FLEET_REAL_NODE:-auto}" = 0 ]; then
  log "real node: MODEL_FLEET_REAL_NODE=0, not building kubelet, containerd, CNI plugins, images"
  exit 0
fi
node_total=$SECONDS
build_component kubernetes-node "$KUBERNETES_VERSION" "$k8s_ldflags" k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy
# containerd's own release build tags: no btrfs/zfs/devmapper snapshotters (btrfs needs cgo), no
# generated CLI docs.
BUILD_TAGS="no_btrfs no_zfs no_devmapper urfave_cli_no_docs" build_component containerd "$CONTAINERD_VERSION" \
  "-X github.com/containerd/containerd/v2/version.Version=${CONTAINERD_VERSION#v} -X github.com/containerd/containerd/v2/version.Revision=proxy" \
  github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
  github.com/containerd/containerd/v2/cmd/ctr
build_component cni-plugins "$CNI_PLUGINS_VERSION" "-X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=${CNI_PLUGINS_VERSION}" \
  github.com/containernetworking/plugins/plugins/main/bridge github.com/containernetworking/plugins/plugins/main/loopback \
  github.com/containernetworking/plugins/plugins/ipam/host-local github.com/containernetworking/plugins/plugins/meta/portmap
build_images
log "real node binaries and images ready in $((SECONDS - node_total))s"
