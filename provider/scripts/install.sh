#!/usr/bin/env bash
# Builds the release binary of terraform-provider-modelfleet, packs the release archive
#   terraform-provider-modelfleet_<version>_<os>_<arch>.zip (+ SHA256SUMS)
# and lays it out as a filesystem mirror (packed layout) for registry.terraform.io/modelfleet/modelfleet
# and registry.opentofu.org/modelfleet/modelfleet (the address `modelfleet/modelfleet` has in Terraform
# and in OpenTofu), so users can `terraform init` (or `tofu init`) offline:
#   terraform init -plugin-dir="$MIRROR"
# or with a CLI config:
#   provider_installation { filesystem_mirror { path = "$MIRROR" } }
#
# Environment:
#   MIRROR           mirror root (default: <repo>/.local/terraform-mirror)
#   DIST             where the archive and SHA256SUMS go (default: <repo>/.local/dist)
#   PROVIDER_BINARY  use this binary instead of building (tests use the debug build)
#   CARGO_TARGET_DIR cargo's target directory (default: <repo>/target)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
NAME="terraform-provider-modelfleet"
ADDRESS="registry.terraform.io/modelfleet/modelfleet"
TOFU_ADDRESS="registry.opentofu.org/modelfleet/modelfleet"
MIRROR="${MIRROR:-$ROOT/.local/terraform-mirror}"
DIST="${DIST:-$ROOT/.local/dist}"

VERSION="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n1)"
[ -n "$VERSION" ] || { echo "install.sh: cannot read the workspace version from Cargo.toml" >&2; exit 1; }

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "install.sh: unsupported OS $(uname -s)" >&2; exit 1 ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "install.sh: unsupported architecture $(uname -m)" >&2; exit 1 ;;
esac
TARGET="${os}_${arch}"

if [ -z "${PROVIDER_BINARY:-}" ]; then
  echo "==> cargo build --release -p $NAME" >&2
  (cd "$ROOT" && cargo build --release --locked -p "$NAME")
  PROVIDER_BINARY="${CARGO_TARGET_DIR:-$ROOT/target}/release/$NAME"
fi
[ -x "$PROVIDER_BINARY" ] || { echo "install.sh: no executable at $PROVIDER_BINARY" >&2; exit 1; }

ARCHIVE="${NAME}_${VERSION}_${TARGET}.zip"
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
# Registry convention: the binary inside the archive is terraform-provider-<type>_v<version>.
cp "$PROVIDER_BINARY" "$staging/${NAME}_v${VERSION}"
chmod 0755 "$staging/${NAME}_v${VERSION}"

mkdir -p "$DIST"
rm -f "$DIST/$ARCHIVE"
if command -v zip >/dev/null 2>&1; then
  (cd "$staging" && zip -q -X "$DIST/$ARCHIVE" "${NAME}_v${VERSION}")
else
  python3 - "$staging/${NAME}_v${VERSION}" "$DIST/$ARCHIVE" <<'PY'
import sys, zipfile, os
src, dst = sys.argv[1], sys.argv[2]
info = zipfile.ZipInfo(os.path.basename(src))
info.external_attr = 0o100755 << 16
info.compress_type = zipfile.ZIP_DEFLATED
with open(src, "rb") as f, zipfile.ZipFile(dst, "w") as z:
    z.writestr(info, f.read())
PY
fi
(cd "$DIST" && sha256sum "$ARCHIVE" > "${NAME}_${VERSION}_SHA256SUMS")

# Packed filesystem-mirror layout: HOSTNAME/NAMESPACE/TYPE/<archive>.
for address in "$ADDRESS" "$TOFU_ADDRESS"; do
  mkdir -p "$MIRROR/$address"
  cp "$DIST/$ARCHIVE" "$MIRROR/$address/$ARCHIVE"
done

cat <<MSG
Installed $ADDRESS and $TOFU_ADDRESS $VERSION ($TARGET)
  archive: $DIST/$ARCHIVE
  mirror:  $MIRROR
Use it offline with either:
  terraform init -plugin-dir="$MIRROR"
or a CLI config (TF_CLI_CONFIG_FILE or ~/.terraformrc):
  provider_installation {
    filesystem_mirror {
      path    = "$MIRROR"
      include = ["$ADDRESS"]
    }
    direct {
      exclude = ["$ADDRESS"]
    }
  }
With OpenTofu (tofu init), use $TOFU_ADDRESS in include and exclude.
MSG
