#!/usr/bin/env bash
# The real OpenAI-compatible server that the validation checks (model-fleet-check) are tested against.
#
#   bootstrap.sh            (make validation-bootstrap; the end-to-end test runs it too)
#       A Python virtual environment under $MODEL_FLEET_CACHE/validation-venv-HASH with the pinned packages
#       of requirements.txt beside this script: llama-cpp-python's server, built from source with cmake
#       (llama.cpp compiles on the machine: several minutes on 2 cores the first time; pip keeps the built
#       wheel in its cache), and the gguf package that writes the test's tiny model. HASH covers
#       requirements.txt and the Python version, so editing a pin makes a new venv. Idempotent: when the
#       venv is complete it prints its path and returns at once.
#       Needs python3 (3.9+) with venv, cmake, a C/C++ compiler (Debian: apt-get install cmake
#       build-essential python3-venv); it installs them with apt-get when it runs as root and one is missing.
#   bootstrap.sh path
#       Prints the venv folder (whether or not it exists).
# The last line printed on stdout is the venv folder.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${MODEL_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/model-fleet}
PYTHON=${PYTHON:-python3}

log() { printf '[%s] validation-bootstrap: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

venv_dir() {
  local sum
  sum=$( { cat "$HERE/requirements.txt"; "$PYTHON" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-12)
  printf '%s/validation-venv-%s' "$CACHE" "$sum"
}

build_tools() {
  local missing=()
  command -v cmake >/dev/null || missing+=(cmake)
  command -v cc >/dev/null && command -v c++ >/dev/null || missing+=(build-essential)
  "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
  [ ${#missing[@]} -eq 0 ] && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing ${missing[*]} with apt-get"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
      die "apt-get install ${missing[*]} failed"
  else
    die "missing build tools: ${missing[*]} (Debian: apt-get install ${missing[*]}); llama-cpp-python compiles llama.cpp with them"
  fi
}

bootstrap() {
  local venv start; venv=$(venv_dir)
  if [ -f "$venv/.complete" ]; then
    log "venv $venv is ready"
    echo "$venv"
    return
  fi
  command -v "$PYTHON" >/dev/null || die "$PYTHON is not installed"
  build_tools
  start=$(date +%s)
  log "creating $venv (requirements.txt: llama-cpp-python builds llama.cpp from source, several minutes the first time)"
  rm -rf "$venv"
  mkdir -p "$CACHE"
  "$PYTHON" -m venv "$venv" || die "$PYTHON -m venv failed (Debian: apt-get install python3-venv)"
  # CPU only, no BLAS; as many compile jobs as cores. The built wheel lands in pip's cache, so a new venv (a pin
  # change elsewhere) reuses it.
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} CMAKE_ARGS=${CMAKE_ARGS:--DGGML_BLAS=OFF -DGGML_CUDA=OFF} \
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input --require-virtualenv \
    -r "$HERE/requirements.txt" || die "pip install -r $HERE/requirements.txt failed (output above)"
  "$venv/bin/pip" check >/dev/null || die "pip check failed in $venv: requirements.txt is inconsistent"
  "$venv/bin/python" -c 'import llama_cpp, llama_cpp.server, gguf' || die "the venv $venv cannot import llama_cpp.server or gguf"
  touch "$venv/.complete"
  log "venv $venv ready in $(( $(date +%s) - start )) s"
  echo "$venv"
}

case ${1:-} in
  "") bootstrap ;;
  path) venv_dir; echo ;;
  *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
