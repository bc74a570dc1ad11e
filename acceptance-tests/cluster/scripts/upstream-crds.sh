#!/usr/bin/env bash
# Fetches the upstream CRDs the operator's children need, from their Go module zips at the versions
# in versions.env (`go mod download -json`, checksum-verified by the Go module proxy's sum database):
#   Gateway API  sigs.k8s.io/gateway-api            config/crd/standard/*.yaml (standard channel)
#   KEDA         github.com/kedacore/keda/v2        config/crd/bases/keda.sh_*.yaml
#   HTTP add-on  github.com/kedacore/http-add-on    config/crd/bases/http.keda.sh_*.yaml
# Copies them to $MODEL_FLEET_CACHE/crds/{gateway-api,keda,keda-http}-<version>/ (idempotent) and prints
# the folder holding `gateway-api`, `keda` and `keda-http` links to them.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require_go
root="$MODEL_FLEET_CACHE/crds"
mkdir -p "$root"

# fetch NAME MODULE VERSION SUBDIR GLOB
fetch() {
  local name=$1 module=$2 version=$3 sub=$4 glob=$5 dest="$root/$1-$3"
  if [ ! -f "$dest/.complete" ]; then
    log "fetching $module@$version CRDs from the Go module proxy"
    local mod_dir
    mod_dir=$(cd "$root" && GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
    [ -d "$mod_dir/$sub" ] || die "$module@$version has no $sub"
    rm -rf "$dest.tmp"; mkdir -p "$dest.tmp"
    cp "$mod_dir/$sub"/$glob "$dest.tmp/"
    cp "$mod_dir/LICENSE" "$dest.tmp/" 2>/dev/null || true
    chmod 644 "$dest.tmp"/*
    touch "$dest.tmp/.complete"
    rm -rf "$dest"; mv "$dest.tmp" "$dest"
  fi
  ln -sfn "$dest" "$root/$name"
}
fetch gateway-api sigs.k8s.io/gateway-api "$GATEWAY_API_VERSION" config/crd/standard '*.yaml'
fetch keda github.com/kedacore/keda/v2 "$KEDA_VERSION" config/crd/bases 'keda.sh_*.yaml'
fetch keda-http github.com/kedacore/http-add-on "$KEDA_HTTP_ADD_ON_VERSION" config/crd/bases 'http.keda.sh_*.yaml'
echo "$root"
