#!/usr/bin/env bash
# The validation check image: model-fleet-check (validation/), one static binary in an otherwise
# empty image, built like the operator's (images/operator.sh) with crane, no container engine.
#
#   check.sh build            (make image-check)
#       cargo build --release of model-fleet-check for x86_64-unknown-linux-gnu, statically linked
#       (-C target-feature=+crt-static; TLS is rustls, no OpenSSL), packed as
#       modelfleet.local/model-fleet-check:VERSION into
#       .local/images/model-fleet-check-VERSION-linux-amd64.tar. Runs as 65532:65532, no shell;
#       the entrypoint is the binary, so a Job's args are its subcommand and flags.
#   check.sh load INSTANCE
#       Pushes that image into the real node registry of a local cluster instance.
#   check.sh push REGISTRY
#       Pushes it as REGISTRY/model-fleet-check:VERSION (credentials: crane auth login).
set -euo pipefail
source "$(dirname "$0")/../acceptance-tests/cluster/scripts/lib.sh"

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

NAME=model-fleet-check
TRIPLE=x86_64-unknown-linux-gnu
VERSION=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$REPO_ROOT/Cargo.toml")
[ -n "$VERSION" ] || die "no [workspace.package] version in $REPO_ROOT/Cargo.toml"
TARBALL="$REPO_ROOT/.local/images/$NAME-$VERSION-linux-amd64.tar"
TARGET_DIR=${CARGO_TARGET_DIR:-$REPO_ROOT/target}

cmd_build() {
  local rev
  rev=$(git -C "$REPO_ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
  log "image: cargo build --release -p $NAME --target $TRIPLE (static)"
  # --target keeps RUSTFLAGS off build scripts and proc macros, which must stay dynamic.
  RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
    cargo build --quiet --release --locked -p "$NAME" --target "$TRIPLE" --manifest-path "$REPO_ROOT/Cargo.toml"
  "$REPO_ROOT/images/image.sh" build "$TARGET_DIR/$TRIPLE/release/$NAME" "/$NAME" "modelfleet.local/$NAME:$VERSION" "$TARBALL" \
    --user 65532:65532 \
    --label "org.opencontainers.image.source=https://github.com/modelfleet/model-fleet" \
    --label "org.opencontainers.image.revision=$rev" \
    --label "org.opencontainers.image.version=$VERSION" \
    --label "org.opencontainers.image.title=$NAME"
}

cmd_load() {
  [ -f "$TARBALL" ] || die "$TARBALL does not exist: run images/check.sh build first"
  "$REPO_ROOT/images/image.sh" load "$1" "$TARBALL" "modelfleet.local/$NAME:$VERSION"
  log "image: modelfleet.local/$NAME:$VERSION loaded into instance $1"
}

cmd_push() {
  local c ref; c="$(crane_bin_dir)/crane"
  [ -x "$c" ] || die "crane is missing ($c): run 'make bootstrap'"
  [ -f "$TARBALL" ] || die "$TARBALL does not exist: run images/check.sh build first"
  ref="${1%/}/$NAME:$VERSION"
  "$c" push "$TARBALL" "$ref" >/dev/null || die "crane push to $ref failed (credentials: crane auth login)"
  log "image: pushed $ref"
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
  build) [ $# -eq 0 ] || usage; cmd_build ;;
  load) [ $# -eq 1 ] || usage; cmd_load "$1" ;;
  push) [ $# -eq 1 ] && [ -n "$1" ] || usage; cmd_push "$1" ;;
  *) usage ;;
esac
