#!/usr/bin/env bash
# Builds what terraform/ and modules/ are checked with, from the Go module proxy at the versions in
# ../versions.env (modules under ../gomod/), niced and one at a time:
#   hashicorp/helm and gavinbunney/kubectl Terraform providers, laid out as a filesystem mirror in
#   $MODEL_FLEET_CACHE/terraform-mirror/ (`terraform init -plugin-dir=...` installs from it offline);
#   tflint, in $MODEL_FLEET_CACHE/bin/infra-tflint-<version>-<hash>/;
#   the Helm CLI (the chart's tests), in $MODEL_FLEET_CACHE/bin/infra-helm-cli-<version>-<hash>/.
# `build.sh kind` builds the kind CLI instead (only `make kind-up` needs it); `build.sh kubernetes-provider` builds
# hashicorp/kubernetes, the peer of the provider benchmarks (only `make bench` needs it), and mirrors it as
# hashicorp/kubernetes KUBERNETES_PROVIDER_LABEL; `build.sh plugin-floor` builds the benchmarks' plugin floor
# (gomod/plugin-floor: a terraform-plugin-framework provider with no I/O).
#
# Idempotent: a built tool is kept under a key of its go.mod and go.sum, so a warm run takes well
# under a second. Each build goes to a temporary folder renamed into place when complete, under a
# lock. Prints the time each build took, its peak memory and the binary's size.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require_go
mkdir -p "$MODEL_FLEET_CACHE/bin"
exec 8>"$MODEL_FLEET_CACHE/bin/.infra-build.lock"
flock 8

# build NAME VERSION PACKAGE OUTPUT_NAME [LDFLAGS]
build() {
  local name=$1 version=$2 package=$3 output=$4 ldflags=${5:-}
  local dest; dest=$(infra_bin_dir "$name" "$version")
  if [ -f "$dest/.complete" ]; then
    log "$name $version: cached in $dest"
    return
  fi
  local tmp="$dest.partial.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  log "$name $version: building $package (niced; a cold build takes minutes)"
  local start=$SECONDS
  (cd "$INFRA_DIR/gomod/$name" && CGO_ENABLED=0 nice -n 15 /usr/bin/time -f '%M' -o "$tmp/.maxrss" \
    go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp/$output" "$package") 2>"$tmp/build.log" ||
    { tail -n 40 "$tmp/build.log" >&2; die "$name $version: go build failed (output above; is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"; }
  local secs=$((SECONDS - start)) rss_kib size_mib
  rss_kib=$(tail -n1 "$tmp/.maxrss"); size_mib=$(($(stat -c %s "$tmp/$output") / 1048576))
  printf 'seconds=%s\npeak_rss_mib=%s\nsize_mib=%s\n' "$secs" "$((rss_kib / 1024))" "$size_mib" >"$tmp/.build-stats"
  touch "$tmp/.complete"
  rm -rf "$dest"; mv "$tmp" "$dest"
  trap - EXIT
  log "$name $version: built in ${secs}s, peak memory $((rss_kib / 1024)) MiB, binary $size_mib MiB -> $dest"
}

# mirror HOST NAME NAMESPACE TYPE VERSION [LABEL]: links the built provider into the filesystem mirror
# layout HOST/NAMESPACE/TYPE/LABEL/OS_ARCH/terraform-provider-TYPE_vLABEL (LABEL defaults to VERSION
# without its v; OpenTofu, the fallback CLI, looks under registry.opentofu.org for the same source address).
mirror() {
  local host=$1 name=$2 namespace=$3 type=$4 version=$5 label=${6:-${5#v}}
  local bin; bin="$(infra_bin_dir "$name" "$version")/terraform-provider-${type}_v${label}"
  local dir="$TF_MIRROR/$host/$namespace/$type/$label/$(go env GOOS)_$(go env GOARCH)"
  mkdir -p "$dir"
  ln -sfn "$bin" "$dir/terraform-provider-${type}_v${label}"
}

# The Helm CLI with the pinned version and the control plane's Kubernetes minor as its default
# `--kube-version` (without it `helm template`/`lint` assume Kubernetes 1.20).
build_helm_cli() {
  local minor=${KUBERNETES_VERSION#v1.}; minor=${minor%%.*}
  build helm-cli "$HELM_CLI_VERSION" helm.sh/helm/v3/cmd/helm helm \
    "-X helm.sh/helm/v3/internal/version.version=$HELM_CLI_VERSION -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor"
}

case "${1:-}" in
  kind)
    build kind "$KIND_VERSION" sigs.k8s.io/kind kind
    exit 0 ;;
  kubernetes-provider)
    build kubernetes-provider "$KUBERNETES_PROVIDER_VERSION" github.com/hashicorp/terraform-provider-kubernetes \
      "terraform-provider-kubernetes_v${KUBERNETES_PROVIDER_LABEL}"
    for host in registry.terraform.io registry.opentofu.org; do
      mirror "$host" kubernetes-provider hashicorp kubernetes "$KUBERNETES_PROVIDER_VERSION" "$KUBERNETES_PROVIDER_LABEL"
    done
    log "hashicorp/kubernetes $KUBERNETES_PROVIDER_LABEL (built from $KUBERNETES_PROVIDER_VERSION) in $TF_MIRROR"
    exit 0 ;;
  plugin-floor)
    build plugin-floor "$(plugin_floor_version)" . terraform-provider-floor
    exit 0 ;;
esac
build helm "$HELM_PROVIDER_VERSION" github.com/hashicorp/terraform-provider-helm "terraform-provider-helm_${HELM_PROVIDER_VERSION}"
build kubectl "$KUBECTL_PROVIDER_VERSION" github.com/gavinbunney/terraform-provider-kubectl "terraform-provider-kubectl_${KUBECTL_PROVIDER_VERSION}"
build tflint "$TFLINT_VERSION" github.com/terraform-linters/tflint tflint
build_helm_cli
for host in registry.terraform.io registry.opentofu.org; do
  mirror "$host" helm hashicorp helm "$HELM_PROVIDER_VERSION"
  mirror "$host" kubectl gavinbunney kubectl "$KUBECTL_PROVIDER_VERSION"
done
log "terraform providers in $TF_MIRROR; tflint $(tflint_bin); helm $(helm_bin)"
