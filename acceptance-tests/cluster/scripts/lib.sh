# Shared helpers for the control-plane scripts. Sourced, never run.
# shellcheck shell=bash
CLUSTER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_ROOT=$(cd "$CLUSTER_DIR/../.." && pwd)
# shellcheck source=../versions.env
source "$CLUSTER_DIR/versions.env"
export GOTOOLCHAIN=local
MODEL_FLEET_CACHE=${MODEL_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/model-fleet}

# Service addresses of every instance (kube-apiserver --service-cluster-ip-range); they exist only
# inside a real node's network namespace (kube-proxy), never on the host. A /16 (65534 ClusterIPs): the load drill
# and the benchmarks create thousands of Services (a /24 ran out at about 250: "failed to allocate a serviceIP").
SERVICE_CIDR=10.0.0.0/16

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# pid_runs PID PATTERN: PID is a running process (not a zombie) whose command line matches the extended regex
# PATTERN (a guard against pid reuse). A process in the middle of execve has an empty command line for a moment (the
# kernel installs the new memory map before it records the arguments; seen as "exited during start-up" with an empty
# log on a loaded machine), so an empty command line counts as running unless the process is a zombie or a kernel
# thread (no executable: a reused pid).
pid_runs() {
  local pid=$1 pattern=$2 cmd state
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  if [ -n "$cmd" ]; then grep -qE -- "$pattern" <<<"$cmd"; return; fi
  readlink "/proc/$pid/exe" >/dev/null 2>&1 || return 1
  state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

require_go() {
  command -v go >/dev/null 2>&1 || die "Go is not installed or not on PATH. The local control plane is built from the Go module proxy: install Go 1.25 or newer (https://go.dev/doc/install), then rerun."
  local v; v=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
  case "$v" in 1.2[5-9]*|1.[3-9]*) ;; *) die "Go $v is too old: Kubernetes ${KUBERNETES_VERSION} needs Go 1.25 or newer.";; esac
}

# component_bin_dir NAME VERSION: the cache folder holding a component's binaries. The key includes
# a hash of the component's go.mod and go.sum (gomod/NAME/), so editing the pinned module rebuilds it.
component_bin_dir() {
  local name=$1 version=$2 sum
  sum=$(cat "$CLUSTER_DIR/gomod/$name/go.mod" "$CLUSTER_DIR/gomod/$name/go.sum" | sha256sum | cut -c1-12)
  printf '%s/bin/%s-%s-%s' "$MODEL_FLEET_CACHE" "$name" "$version" "$sum"
}
kubernetes_bin_dir() { component_bin_dir kubernetes "$KUBERNETES_VERSION"; }
etcd_bin_dir() { component_bin_dir etcd "$ETCD_VERSION"; }
kwok_bin_dir() { component_bin_dir kwok "$KWOK_VERSION"; }
opentofu_bin_dir() { component_bin_dir opentofu "$OPENTOFU_VERSION"; }
# The real node's parts (kubelet and kube-proxy have their own module, so their own key).
kubernetes_node_bin_dir() { component_bin_dir kubernetes-node "$KUBERNETES_VERSION"; }
containerd_bin_dir() { component_bin_dir containerd "$CONTAINERD_VERSION"; }
cni_plugins_bin_dir() { component_bin_dir cni-plugins "$CNI_PLUGINS_VERSION"; }
crane_bin_dir() { component_bin_dir crane "$CRANE_VERSION"; }
# images_dir: our own images (images/): the static binaries and their OCI tarballs, keyed by a hash
# of the sources and of crane's module, so an edit to images/ rebuilds them.
images_dir() {
  local sum
  sum=$(cd "$REPO_ROOT/images" && cat go.mod ./*/*.go image.sh "$CLUSTER_DIR/gomod/crane/go.sum" | sha256sum | cut -c1-12)
  printf '%s/images/%s' "$MODEL_FLEET_CACHE" "$sum"
}
# Images every real node serves from its registry: NAME (repository:tag under modelfleet.local) and
# the binary of images/ that is its entrypoint. The tag names the image's interface, not its build.
NODE_IMAGES=("pause:3.10 pause" "echo:0.1 echo")

# terraform_bin: the Terraform-compatible CLI every script and test uses. MODEL_FLEET_TF_CLI picks it:
#   unset or `terraform` (the default): $TF_BIN; `terraform` on PATH; the OpenTofu `make bootstrap`
#     built (a machine without terraform still runs everything);
#   `tofu`: the OpenTofu `make bootstrap` built, else `tofu` on PATH; never falls back to terraform.
# Prints nothing and fails when none exists (or MODEL_FLEET_TF_CLI has another value).
terraform_bin() {
  local tofu; tofu="$(opentofu_bin_dir)/tofu"
  case "${MODEL_FLEET_TF_CLI:-terraform}" in
    terraform)
      if [ -n "${TF_BIN:-}" ]; then command -v "$TF_BIN" && return; return 1; fi
      command -v terraform && return
      [ -x "$tofu" ] && echo "$tofu" ;;
    tofu)
      if [ -x "$tofu" ]; then echo "$tofu"; else command -v tofu; fi ;;
    *) return 1 ;;
  esac
}
