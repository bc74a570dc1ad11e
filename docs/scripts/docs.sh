#!/usr/bin/env bash
# The documentation site: its toolchain and its build.
#
#   docs.sh bootstrap   (make docs-bootstrap)
#       A Python virtual environment under $MODEL_FLEET_CACHE/docs-venv-HASH with the packages of
#       docs/requirements.txt (every one pinned; HASH covers that file and the Python version, so
#       editing a pin builds a new venv), and mermaid's browser build, fetched once from the npm
#       registry with `npm pack`, checked against the integrity pinned below and unpacked into
#       $MODEL_FLEET_CACHE/docs-mermaid-VERSION-umd, so diagrams render with no network. Idempotent:
#       a second run checks the markers and does nothing.
#   docs.sh build       (make docs-build)
#       sphinx-build -W --keep-going (warnings are errors) into docs/_build/html, then Sphinx's
#       linkcheck limited to links inside the site (docs/conf.py ignores every URL with a scheme) and
#       docs/scripts/check_links.py: every relative link and #anchor of the built HTML resolves.
#   docs.sh screenshot OUT.png [PAGE]
#       A screenshot of the built PAGE (default index.html) with headless Chromium (Debian: apt-get
#       install chromium), opened from file:// with every host name unresolvable, so nothing but the
#       built site is loaded.
#   docs.sh paths
#       Prints the venv and mermaid folders.
set -euo pipefail
DOCS=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${MODEL_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/model-fleet}
PYTHON=${PYTHON:-python3}

# mermaid's ESM browser build (what sphinxcontrib-mermaid loads); integrity as the npm registry
# publishes it (`npm view mermaid@VERSION dist.integrity`).
MERMAID_VERSION=12.3.0
MERMAID_INTEGRITY=sha512-4113TdXeLAsMruJ79OpFL5O8+LTFXhQqZ260rF3tgUmiNAtRm4Uume04I+65PRN6yZ69J4f8rVYWW8zRk65UYw==

log() { printf '[%s] docs: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

venv_dir() {
  local sum
  sum=$( { cat "$DOCS/requirements.txt"; "$PYTHON" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-12)
  printf '%s/docs-venv-%s' "$CACHE" "$sum"
}
mermaid_dir() { printf '%s/docs-mermaid-%s-umd' "$CACHE" "$MERMAID_VERSION"; }

bootstrap_venv() {
  local venv; venv=$(venv_dir)
  if [ -f "$venv/.complete" ]; then
    log "venv $venv is ready"
    return
  fi
  command -v "$PYTHON" >/dev/null || die "$PYTHON is not installed; the docs need Python 3.11 or newer"
  log "creating $venv (pinned packages of docs/requirements.txt)"
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input --require-virtualenv \
    -r "$DOCS/requirements.txt"
  "$venv/bin/pip" check >/dev/null || die "pip check failed in $venv: docs/requirements.txt is inconsistent"
  touch "$venv/.complete"
}

bootstrap_mermaid() {
  local dir tmp tarball integrity; dir=$(mermaid_dir)
  if [ -f "$dir/.complete" ]; then
    log "mermaid $MERMAID_VERSION is ready in $dir"
    return
  fi
  command -v npm >/dev/null || die "npm is not installed; it fetches mermaid $MERMAID_VERSION from the npm registry once (Debian: apt-get install npm)"
  log "fetching mermaid $MERMAID_VERSION (npm pack)"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "mermaid@$MERMAID_VERSION" >/dev/null) || die "npm pack mermaid@$MERMAID_VERSION failed"
  tarball="$tmp/mermaid-$MERMAID_VERSION.tgz"
  integrity="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
  [ "$integrity" = "$MERMAID_INTEGRITY" ] || die "mermaid-$MERMAID_VERSION.tgz has integrity $integrity, expected $MERMAID_INTEGRITY"
  tar -xzf "$tarball" -C "$tmp"
  rm -rf "$dir"
  # html_static_path copies this folder's content into _static/. The one-file browser build (a classic script
  # defining window.mermaid), not the ES module build: browsers refuse module imports from file:// pages, and the
  # site must work opened straight from docs/_build/html.
  mkdir -p "$dir/static/mermaid"
  cp "$tmp/package/dist/mermaid.min.js" "$dir/static/mermaid/"
  cp "$tmp/package/LICENSE" "$dir/static/mermaid/LICENSE"
  rm -rf "$tmp"
  touch "$dir/.complete"
}

cmd_bootstrap() {
  mkdir -p "$CACHE"
  bootstrap_venv
  bootstrap_mermaid
}

cmd_build() {
  local venv; venv=$(venv_dir)
  [ -f "$venv/.complete" ] && [ -f "$(mermaid_dir)/.complete" ] || die "the docs toolchain is missing: run make docs-bootstrap"
  export MODEL_FLEET_DOCS_STATIC; MODEL_FLEET_DOCS_STATIC="$(mermaid_dir)/static"
  log "sphinx-build html (warnings are errors)"
  "$venv/bin/sphinx-build" -q -W --keep-going -b html "$DOCS" "$DOCS/_build/html"
  log "linkcheck (links inside the site only)"
  "$venv/bin/sphinx-build" -q -W --keep-going -b linkcheck "$DOCS" "$DOCS/_build/linkcheck"
  "$venv/bin/python" "$DOCS/scripts/check_links.py" "$DOCS/_build/html"
  log "open $DOCS/_build/html/index.html"
}

cmd_screenshot() {
  local out=${1:?usage: docs.sh screenshot OUT.png [PAGE]} page=${2:-index.html} chromium
  chromium=$(command -v chromium || command -v chromium-browser) || die "chromium is not installed (Debian: apt-get install -y chromium)"
  [ -f "$DOCS/_build/html/$page" ] || die "$DOCS/_build/html/$page does not exist: run make docs-build"
  "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --disable-sync \
    --disable-background-networking --disable-component-update --disable-default-apps --disable-domain-reliability \
    --host-resolver-rules="MAP * ~NOTFOUND" --window-size=1400,1300 --virtual-time-budget=10000 \
    --screenshot="$out" "file://$DOCS/_build/html/$page" 2>/dev/null
  [ -s "$out" ] || die "chromium wrote no screenshot to $out"
  log "screenshot of $page: $out"
}

case "${1:-}" in
  bootstrap) cmd_bootstrap ;;
  screenshot) shift; cmd_screenshot "$@" ;;
  build) cmd_build ;;
  paths) printf 'venv %s\nmermaid %s\n' "$(venv_dir)" "$(mermaid_dir)" ;;
  *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
