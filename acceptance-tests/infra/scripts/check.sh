#!/usr/bin/env bash
# Static checks of every Terraform root (terraform/*), module (modules/*) and module example
# (modules/*/examples/*), on a throw-away copy of the tree so nothing is written into the clone:
#   terraform fmt -check    everywhere
#   terraform validate      with the real providers from the filesystem mirror scripts/build.sh
#                           lays out (hashicorp/helm, gavinbunney/kubectl), for every folder whose
#                           providers are all built here; folders needing hashicorp/aws or
#                           hashicorp/google (not buildable from the Go module proxy) are listed as
#                           "fmt+tflint only"
#   tflint                  everywhere, bundled terraform ruleset, preset "all" (../tflint.hcl)
# Prints one line per folder and check, then a summary; exits 1 if anything failed (all output of
# the failing command is printed).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tf=$(terraform_bin) || die "no terraform CLI: install terraform 1.11 or run make bootstrap (it builds OpenTofu)"
tflint=$(tflint_bin)
[ -x "$tflint" ] && [ -d "$TF_MIRROR/registry.terraform.io/hashicorp/helm" ] && [ -d "$TF_MIRROR/registry.terraform.io/gavinbunney/kubectl" ] ||
  die "the Terraform providers or tflint are not built: run make bootstrap (or acceptance-tests/infra/scripts/build.sh)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The roots and modules refer to ../../modules, ../../charts and ../../examples: copy that layout.
for top in terraform modules charts examples; do
  (cd "$REPO_ROOT" && tar --exclude=.terraform --exclude='*.tfstate*' --exclude=.terraform.lock.hcl -cf - "$top") | tar -xf - -C "$work"
done
printf '' >"$work/empty.tfrc"
export TF_CLI_CONFIG_FILE="$work/empty.tfrc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
unset TF_PLUGIN_CACHE_DIR TF_DATA_DIR

failures=0
# run LABEL DIR CMD...: runs CMD in DIR, prints "ok"/"FAILED" and the output on failure.
run() {
  local label=$1 dir=$2; shift 2
  local out
  if out=$(cd "$work/$dir" && "$@" 2>&1); then
    printf 'ok        %-9s %s\n' "$label" "$dir"
  else
    printf 'FAILED    %-9s %s\n%s\n' "$label" "$dir" "$out"
    failures=$((failures + 1))
  fi
}

# Folders holding *.tf files, sorted: roots, modules and their examples.
mapfile -t dirs < <(cd "$work" && for d in terraform/*/ modules/*/ modules/*/examples/*/; do
  d=${d%/}; compgen -G "$d/*.tf" >/dev/null && echo "$d"; done | sort)

run fmt . "$tf" fmt -check -recursive -diff -no-color terraform
run fmt . "$tf" fmt -check -recursive -diff -no-color modules

validated=() static_only=()
for d in "${dirs[@]}"; do
  if grep -qE 'source[[:space:]]*=[[:space:]]*"hashicorp/(aws|google)"' "$work/$d"/*.tf; then
    static_only+=("$d")
    printf 'skipped   %-9s %s (needs hashicorp/aws or hashicorp/google: fmt+tflint only)\n' validate "$d"
  else
    validated+=("$d")
    run validate "$d" bash -c '"$0" init -backend=false -input=false -no-color -plugin-dir="$1" >/dev/null && "$0" validate -no-color' "$tf" "$TF_MIRROR"
  fi
  run tflint "$d" "$tflint" --config="$INFRA_DIR/tflint.hcl" --no-color
done

echo "validated with the real providers: ${validated[*]}"
echo "fmt+tflint only: ${static_only[*]}"
[ "$failures" -eq 0 ] || die "$failures check(s) failed (output above)"
echo "infra checks: ${#dirs[@]} folders, all clean"
