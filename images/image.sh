#!/usr/bin/env bash
# Container images without a container engine: crane (go-containerregistry, built by `make
# bootstrap`) packs a static binary into a one-layer OCI image, and the real node of a local
# cluster instance serves it from its own registry, from which its containerd pulls.
#
#   image.sh build BINARY ENTRYPOINT NAME OUT.tar [crane mutate flags...]
#       An image NAME (e.g. modelfleet.local/operator:dev) holding BINARY at /<basename> with
#       ENTRYPOINT (comma-separated argv, e.g. /echo or /model-fleet-operator,run), written to OUT.tar
#       (a `docker save` style tarball that `crane push`, `ctr images import` and other tools read).
#       Extra flags go to `crane mutate` (e.g. --user 65532:65532, --annotation K=V, --label K=V).
#       Built against a throwaway crane registry on 127.0.0.1 that stops with the script.
#       BINARY must be static (CGO_ENABLED=0 for Go; Rust: -C target-feature=+crt-static): the
#       image has no libc.
#   image.sh load INSTANCE OUT.tar NAME
#       Pushes OUT.tar as NAME into the registry of INSTANCE's real node (inside the node's network
#       namespace, 127.0.0.1:5000). NAME must be modelfleet.local/REPOSITORY:TAG: the node's
#       containerd resolves modelfleet.local to that registry, so pods use NAME as their image.
#
# Example (what `make bootstrap` and `cluster.sh up` do for modelfleet.local/echo:0.1):
#   CGO_ENABLED=0 go build -o /tmp/echo ./images/echo
#   images/image.sh build /tmp/echo /echo modelfleet.local/echo:0.1 /tmp/echo.tar
#   images/image.sh load dev /tmp/echo.tar modelfleet.local/echo:0.1
set -euo pipefail
source "$(dirname "$0")/../acceptance-tests/cluster/scripts/lib.sh"

usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

crane_bin() {
  local c; c="$(crane_bin_dir)/crane"
  [ -x "$c" ] || die "crane is missing ($c): run 'make bootstrap' (builds go-containerregistry's crane ${CRANE_VERSION})"
  echo "$c"
}

check_name() {
  [[ "$1" =~ ^modelfleet\.local/[a-z0-9]+([._/-][a-z0-9]+)*:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] ||
    die "image name '$1' must be modelfleet.local/REPOSITORY:TAG (lower-case repository, an explicit tag: an untagged or :latest image is pulled on every start)"
  [[ "$1" != *:latest ]] || die "image name '$1': use a tag other than latest (kubelet pulls :latest on every pod start)"
}

cmd_build() {
  [ $# -ge 4 ] || usage
  local binary=$1 entrypoint=$2 name=$3 out=$4 crane
  shift 4
  [ -f "$binary" ] && [ -x "$binary" ] || die "binary '$binary' does not exist or is not executable"
  check_name "$name"
  if command -v file >/dev/null && file -L "$binary" | grep -q 'dynamically linked'; then
    die "$binary is dynamically linked: the image has no libc, build it static (Go: CGO_ENABLED=0; Rust: RUSTFLAGS='-C target-feature=+crt-static' with --target)"
  fi
  crane=$(crane_bin)
  # Globals: the EXIT trap runs after this function has returned.
  tmp=$(mktemp -d) registry_pid=""
  trap '[ -z "$registry_pid" ] || kill "$registry_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/rootfs/tmp"
  chmod 1777 "$tmp/rootfs/tmp"
  install -m 0755 "$binary" "$tmp/rootfs/$(basename "$binary")"
  # Reproducible layer: fixed owner and time, sorted entries.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$tmp/rootfs" -cf "$tmp/layer.tar" .

  # A throwaway registry on loopback: crane mutates images in a registry only.
  "$crane" registry serve --address 127.0.0.1:0 >"$tmp/registry.log" 2>&1 &
  registry_pid=$!
  local port="" i
  for i in $(seq 100); do
    port=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$tmp/registry.log")
    [ -n "$port" ] && break
    kill -0 "$registry_pid" 2>/dev/null || { cat "$tmp/registry.log" >&2; die "crane registry serve exited"; }
    sleep 0.1
  done
  [ -n "$port" ] || die "crane registry serve did not report its port in 10 s"
  local staging="127.0.0.1:$port/${name#modelfleet.local/}"
  mkdir -p "$(dirname "$out")"
  { "$crane" append --oci-empty-base -f "$tmp/layer.tar" -t "$staging" &&
    "$crane" mutate "$staging" --entrypoint="$entrypoint" --set-platform linux/amd64 \
      --label "org.opencontainers.image.title=${name%%:*}" "$@" -t "$name" -o "$out.tmp"; } >"$tmp/crane.log" 2>&1 ||
    { cat "$tmp/crane.log" >&2; die "crane could not build $name (output above)"; }
  mv "$out.tmp" "$out"
  log "image $name ($(du -h "$out" | cut -f1)): $out"
}

cmd_load() {
  [ $# -eq 3 ] || usage
  local instance=$1 tarball=$2 name=$3
  check_name "$name"
  [ -f "$tarball" ] || die "image tarball '$tarball' does not exist: build it with 'images/image.sh build'"
  local node_env="$REPO_ROOT/.local/$instance/node/node.env"
  [ -f "$node_env" ] || die "instance '$instance' has no real node (no $node_env): start it with 'make cluster-up INSTANCE=$instance' on a machine that can run one ('cluster.sh status $instance' says why not)"
  # shellcheck disable=SC1090
  source "$node_env"
  [ -e "/run/netns/$NODE_NETNS" ] || die "the network namespace $NODE_NETNS of instance '$instance' is gone: restart the instance"
  nsenter --net="/run/netns/$NODE_NETNS" "$(crane_bin)" push "$tarball" "$NODE_REGISTRY/${name#modelfleet.local/}" >/dev/null 2>"$REPO_ROOT/.local/$instance/node/logs/push.log" ||
    die "pushing $name into the registry of instance '$instance' failed (registry log: $REPO_ROOT/.local/$instance/logs/registry.log)"
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
  build) cmd_build "$@" ;;
  load) cmd_load "$@" ;;
  *) usage ;;
esac
