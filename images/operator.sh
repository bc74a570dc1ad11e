#!/usr/bin/env bash
# The operator image: one static binary in an otherwise empty image, built without a container
# engine (crane), one image per architecture plus an image index.
#
#   operator.sh build            (make image)
#       Builds model-fleet-operator for every architecture whose Rust target is installed
#       (x86_64-unknown-linux-gnu always; aarch64-unknown-linux-gnu when `rustup target add` has
#       installed it), statically linked (-C target-feature=+crt-static), release profile, and packs
#       each into .local/images/model-fleet-operator-VERSION-linux-ARCH.tar as
#       modelfleet.local/model-fleet-operator:VERSION. The image runs as 65532:65532 (non-root),
#       has no shell, and carries the OCI labels source, revision, version (its config); push sets
#       the same as OCI annotations on each image manifest.
#       VERSION is the workspace version in Cargo.toml, which is also the chart's appVersion.
#   operator.sh push REGISTRY    (make image-push REGISTRY=...)
#       Pushes each built image as REGISTRY/model-fleet-operator:VERSION-ARCH and the image index
#       REGISTRY/model-fleet-operator:VERSION over them; prints the index reference. Credentials
#       come from crane's usual docker config (`crane auth login`).
#   operator.sh load INSTANCE
#       Pushes the amd64 image into the real node registry of a local cluster instance, so a
#       chart installed with image.repository=modelfleet.local/model-fleet-operator pulls it.
set -euo pipefail
source "$(dirname "$0")/../acceptance-tests/cluster/scripts/lib.sh"

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

NAME=model-fleet-operator
SOURCE=https://github.com/modelfleet/model-fleet
OUT_DIR="$REPO_ROOT/.local/images"
VERSION=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$REPO_ROOT/Cargo.toml")
[ -n "$VERSION" ] || die "no [workspace.package] version in $REPO_ROOT/Cargo.toml"
TARGET_DIR=${CARGO_TARGET_DIR:-$REPO_ROOT/target}

# arch -> Rust target triple
declare -A TRIPLE=([amd64]=x86_64-unknown-linux-gnu [arm64]=aarch64-unknown-linux-gnu)

tarball() { echo "$OUT_DIR/$NAME-$VERSION-linux-$1.tar"; }

installed_arches() {
  local arch installed
  installed=$(rustup target list --installed 2>/dev/null || rustc -vV | sed -n 's/^host: //p')
  for arch in amd64 arm64; do
    if grep -qx "${TRIPLE[$arch]}" <<<"$installed"; then
      echo "$arch"
    else
      log "image: $arch skipped: the Rust target ${TRIPLE[$arch]} is not installed ('rustup target add ${TRIPLE[$arch]}' cannot fetch it on this machine; run make image where it can). The index will have no $arch entry."
    fi
  done
}

revision() {
  local rev
  rev=$(git -C "$REPO_ROOT" rev-parse HEAD 2>/dev/null) || { echo unknown; return; }
  git -C "$REPO_ROOT" diff --quiet HEAD 2>/dev/null || rev="$rev-dirty"
  echo "$rev"
}

cmd_build() {
  [ $# -eq 0 ] || usage
  local arch triple binary rev arches
  arches=$(installed_arches)
  [ -n "$arches" ] || die "no Rust linux target installed for amd64 or arm64"
  rev=$(revision)
  # A tarball left from an earlier build of an architecture skipped now would go into the pushed index: drop it.
  for arch in amd64 arm64; do
    grep -qx "$arch" <<<"$arches" || rm -f "$(tarball "$arch")"
  done
  for arch in $arches; do
    triple=${TRIPLE[$arch]}
    log "image: cargo build --release --target $triple (static)"
    # --target keeps RUSTFLAGS off build scripts and proc macros, which must stay dynamic.
    RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
      cargo build --quiet --release --locked -p model-fleet-operator --target "$triple" \
      --manifest-path "$REPO_ROOT/Cargo.toml"
    binary="$TARGET_DIR/$triple/release/$NAME"
    # The tarball keeps the config (user, labels); manifest annotations are set at push time (a tarball has no
    # manifest of its own), from the same labels.
    "$REPO_ROOT/images/image.sh" build "$binary" "/$NAME" "modelfleet.local/$NAME:$VERSION" "$(tarball "$arch")" \
      --user 65532:65532 \
      --label "org.opencontainers.image.source=$SOURCE" \
      --label "org.opencontainers.image.revision=$rev" \
      --label "org.opencontainers.image.version=$VERSION" \
      --label "org.opencontainers.image.title=$NAME"
  done
}

# annotations REF: the OCI annotations of the image at REF, from its config's labels.
annotations() {
  crane_cmd config "$1" | python3 -c '
import json, sys
labels = json.load(sys.stdin).get("config", {}).get("Labels") or {}
for k, v in sorted(labels.items()):
    if k.startswith("org.opencontainers.image."):
        print("--annotation=%s=%s" % (k, v))'
}

crane_cmd() {
  local c; c="$(crane_bin_dir)/crane"
  [ -x "$c" ] || die "crane is missing ($c): run 'make bootstrap'"
  "$c" "$@"
}

cmd_push() {
  [ $# -eq 1 ] && [ -n "$1" ] || die "usage: make image-push REGISTRY=host[:port]/path (e.g. ghcr.io/your-org)"
  local registry=${1%/} arch ref index="${1%/}/$NAME:$VERSION" manifests=() notes=() found=0
  for arch in amd64 arm64; do
    [ -f "$(tarball "$arch")" ] || continue
    found=1
    ref="$registry/$NAME:$VERSION-$arch"
    crane_cmd push "$(tarball "$arch")" "$ref" >/dev/null || die "crane push to $ref failed (credentials: crane auth login)"
    mapfile -t notes < <(annotations "$ref")
    crane_cmd mutate "$ref" "${notes[@]}" -t "$ref" >/dev/null || die "crane mutate (annotations) of $ref failed"
    manifests+=(-m "$ref")
    log "image: pushed $ref"
  done
  [ "$found" = 1 ] || die "no image built for version $VERSION in $OUT_DIR: run make image first"
  # A fresh index each time (no -t base): it lists exactly the architectures built now.
  crane_cmd index append "${manifests[@]}" -t "$index" >/dev/null || die "crane index append for $index failed"
  log "image: index $index ($(crane_cmd digest "$index"))"
  echo "$index"
}

cmd_load() {
  [ $# -eq 1 ] || usage
  [ -f "$(tarball amd64)" ] || die "$(tarball amd64) does not exist: run make image first"
  "$REPO_ROOT/images/image.sh" load "$1" "$(tarball amd64)" "modelfleet.local/$NAME:$VERSION"
  log "image: modelfleet.local/$NAME:$VERSION loaded into instance $1"
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
  build) cmd_build "$@" ;;
  push) cmd_push "$@" ;;
  load) cmd_load "$@" ;;
  *) usage ;;
esac
