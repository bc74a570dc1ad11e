#!/usr/bin/env bash
# The provider half of `make bench` (issue 17). For each N, against a running local control plane instance:
#   modelfleet_inference  N resources of our provider (release build),
#   terraform_data        N resources of Terraform's built-in provider: the floor (no provider I/O at all),
#   floor_item            N resources of the plugin floor (infra/gomod/plugin-floor: a terraform-plugin-framework
#                         provider over protocol 5, two attributes, no I/O, its SDK logging off): what any plugin
#                         provider costs,
#   kubernetes_manifest   N resources of hashicorp/kubernetes (the peer) managing the same InferenceService objects;
# times `terraform apply` (create all N) and `terraform plan` (refresh, no changes; the median of PLAN_RUNS), counts
# the API requests each provider makes per resource during one plan (the instance's audit log: the providers
# authenticate as their own users, which the audit policy records for every verb), the plugin's peak RSS during a plan
# (GNU time around the plugin binary), the CPU seconds of Terraform and of the plugin per plan (GNU time around each;
# the median of the plans) and the plugin's start-to-handshake time (median of 20 starts).
#
# With BENCH_PROFILE=N, one more plan of N modelfleet_inference and of N floor_item runs under `perf record`; its
# Terraform samples become a flame graph (fold-go-perf.py, then inferno-flamegraph) and a list of the functions with
# the largest inclusive share, next to RESULTS_FILE (plan-<kind>-<N>.svg, .txt and the folded stacks .folded). Needs perf and inferno
# (`cargo install --locked inferno`).
#
# Usage: provider.sh INSTANCE RESULTS_FILE [N...]   (default N: 100 500 1000)
# Writes one JSON line per kind and N to RESULTS_FILE; report.py turns them into the table of docs/PERFORMANCE.md.
# Needs: the instance running with the Model Fleet CRDs, the release provider built, hashicorp/kubernetes and the
# plugin floor built (acceptance-tests/infra/scripts/build.sh kubernetes-provider, build.sh plugin-floor); bench.sh
# does all four.
set -euo pipefail
shopt -s inherit_errexit
source "$(dirname "$0")/../infra/scripts/lib.sh"
instance=${1:?instance}
results=${2:?results file}
shift 2
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100 500 1000)
PLAN_RUNS=${PLAN_RUNS:-3}
BENCH_PROFILE=${BENCH_PROFILE:-}
if [ -n "$BENCH_PROFILE" ]; then
  for tool in perf inferno-flamegraph readelf; do
    command -v "$tool" >/dev/null || die "BENCH_PROFILE needs $tool on PATH (perf: apt-get install linux-perf; inferno: cargo install --locked inferno)"
  done
fi
# The peer is slow (tens of seconds per plan of 100 here): BENCH_PEER_MAX_N skips it above that N.
BENCH_PEER_MAX_N=${BENCH_PEER_MAX_N:-1000000}
cluster="$REPO_ROOT/acceptance-tests/cluster/scripts/cluster.sh"
target=${CARGO_TARGET_DIR:-$REPO_ROOT/target}
provider_bin="$target/release/terraform-provider-modelfleet"
[ -x "$provider_bin" ] || die "no release provider at $provider_bin: cargo build --release -p terraform-provider-modelfleet"
peer_bin="$(infra_bin_dir kubernetes-provider "$KUBERNETES_PROVIDER_VERSION")/terraform-provider-kubernetes_v${KUBERNETES_PROVIDER_LABEL}"
[ -x "$peer_bin" ] || die "hashicorp/kubernetes is not built: acceptance-tests/infra/scripts/build.sh kubernetes-provider"
floor_bin=$(plugin_floor_bin)
[ -x "$floor_bin" ] || die "the plugin floor is not built: acceptance-tests/infra/scripts/build.sh plugin-floor"
tf=$("$REPO_ROOT/acceptance-tests/cluster/scripts/tf-bin.sh")
dir="$REPO_ROOT/.local/$instance"
kubectl=("$dir/bin/kubectl" --kubeconfig "$dir/kubeconfig")
audit="$dir/audit.log"
ns=bench-provider
# A run just before this one deleted the namespace without waiting: it must be gone before it is made again.
"${kubectl[@]}" wait --for=delete "namespace/$ns" --timeout=300s >/dev/null 2>&1 || true
"${kubectl[@]}" create namespace "$ns" --dry-run=client -o yaml | "${kubectl[@]}" apply -f - >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE="$work/cli.tfrc"

# wrap NAME BINARY DEST [VAR=VALUE...]: DEST runs BINARY under GNU time with the environment VAR=VALUE..., appending
# "<peak KiB> <seconds> <user CPU s> <system CPU s>" per start to $work/NAME.rss.
wrap() {
  mkdir -p "$(dirname "$3")"
  printf '#!/bin/sh\nexec env %s /usr/bin/time -f "%%M %%e %%U %%S" -a -o "%s" "%s" "$@"\n' "${*:4}" "$work/$1.rss" "$2" >"$3"
  chmod +x "$3"
}
wrap modelfleet "$provider_bin" "$work/overrides/terraform-provider-modelfleet"
# The framework logs every call at trace level to stderr unless told not to (terraform-plugin-log: TF_LOG_SDK*), and
# Terraform parses each line: 32 JSON lines per resource per plan, a fifth of Terraform's samples. Off, the floor is
# the least a plugin costs. Ours logs nothing per call at its default level.
wrap floor "$floor_bin" "$work/floor/terraform-provider-floor" TF_LOG_SDK=OFF TF_LOG_SDK_PROTO=OFF TF_LOG_SDK_FRAMEWORK=OFF
peer_dir="$work/mirror/registry.terraform.io/hashicorp/kubernetes/$KUBERNETES_PROVIDER_LABEL/$(go env GOOS)_$(go env GOARCH)"
wrap kubernetes "$peer_bin" "$peer_dir/terraform-provider-kubernetes_v$KUBERNETES_PROVIDER_LABEL"
cat >"$TF_CLI_CONFIG_FILE" <<EOF
provider_installation {
  dev_overrides {
    "modelfleet/modelfleet"  = "$work/overrides"
    "modelfleet-bench/floor" = "$work/floor"
  }
  filesystem_mirror {
    path    = "$work/mirror"
    include = ["registry.terraform.io/hashicorp/kubernetes"]
  }
}
EOF

# Users the audit policy records for every verb (acceptance-tests/cluster/manifests/audit-policy.yaml).
provider_kubeconfig=$("$cluster" kubeconfig "$instance" model-fleet-bench-provider system:masters)
peer_kubeconfig=$("$cluster" kubeconfig "$instance" model-fleet-bench-peer system:masters)

# The same InferenceService for both providers: a CPU model server with requests and a route.
spec_hcl() {
  cat <<'EOF'
  model {
    name = "m"
  }
  container {
    image = "hashicorp/http-echo:1.0"
    resources {
      requests = { cpu = "0.5", memory = "64Mi" }
    }
  }
  gateway {
    hostnames = ["m${count.index}.localhost"]
  }
EOF
}

config() { # KIND N: main.tf of N resources of KIND
  local kind=$1 n=$2
  case $kind in
    terraform_data)
      printf 'resource "terraform_data" "d" {\n  count = %s\n  input = "bench-${count.index}"\n}\n' "$n" ;;
    floor_item)
      printf 'terraform {\n  required_providers {\n    floor = { source = "modelfleet-bench/floor" }\n  }\n}\n'
      printf 'resource "floor_item" "d" {\n  count = %s\n  input = "bench-${count.index}"\n}\n' "$n" ;;
    modelfleet_inference)
      printf 'terraform {\n  required_providers {\n    modelfleet = { source = "modelfleet/modelfleet" }\n  }\n}\n'
      printf 'provider "modelfleet" {\n  kubeconfig_path = "%s"\n  namespace       = "%s"\n}\n' "$provider_kubeconfig" "$ns"
      printf 'resource "modelfleet_inference" "m" {\n  count = %s\n  name  = "mf-${count.index}"\n' "$n"
      spec_hcl
      echo "}" ;;
    kubernetes_manifest)
      printf 'terraform {\n  required_providers {\n    kubernetes = { source = "hashicorp/kubernetes", version = "%s" }\n  }\n}\n' "$KUBERNETES_PROVIDER_LABEL"
      printf 'provider "kubernetes" {\n  config_path = "%s"\n}\n' "$peer_kubeconfig"
      cat <<EOF
resource "kubernetes_manifest" "m" {
  count = $n
  manifest = {
    apiVersion = "modelfleet.io/v1alpha1"
    kind       = "InferenceService"
    metadata   = { name = "km-\${count.index}", namespace = "$ns" }
    spec = {
      model     = { name = "m" }
      container = { image = "hashicorp/http-echo:1.0", resources = { requests = { cpu = "0.5", memory = "64Mi" } } }
      gateway   = { hostnames = ["k\${count.index}.localhost"] }
    }
  }
}
EOF
      ;;
  esac
}

audit_size() { stat -c %s "$audit"; }
# requests USER FROM: audited requests (any verb) by USER after byte offset FROM, once the log has settled.
requests() {
  sleep 1
  tail -c +"$(($2 + 1))" "$audit" | python3 -c '
import json, sys
user = sys.argv[1]
n = sum(1 for l in sys.stdin if l.strip() and (e := json.loads(l))["stage"] == "ResponseComplete" and e["user"]["username"] == user)
print(n)' "$1"
}
peak_kib() { # NAME: the largest peak RSS any start of plugin NAME reported since the file was cleared
  [ -f "$work/$1.rss" ] || { echo 0; return; }
  awk 'BEGIN{m=0} NF>=2 && $1+0>m {m=$1+0} END{print m}' "$work/$1.rss"
}
plugin_cpu() { # NAME: CPU seconds (user + system) of every start of plugin NAME since the file was cleared
  [ -f "$work/$1.rss" ] || { echo 0; return; }
  awk 'BEGIN{s=0} NF>=4 {s+=$3+$4} END{printf "%.2f\n", s}' "$work/$1.rss"
}
# Terraform's own CPU seconds (user + system) of the last command run under "$timed".
timed=(/usr/bin/time -f "%U %S" -o "$work/terraform.cpu")
terraform_cpu() { awk 'NF==2 && $1 ~ /^[0-9.]+$/ {printf "%.2f\n", $1+$2}' "$work/terraform.cpu"; }
# seconds COMMAND...: runs it (output dropped; a failure, such as a plan with changes, stops the bench) and prints its
# wall time in seconds.
seconds() { local s=$EPOCHREALTIME; "$@" >/dev/null; awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.3f\n", b - a}'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

# handshake BINARY: median seconds from start to the go-plugin handshake line over 20 starts.
handshake() {
  python3 - "$1" <<'EOF'
import os, statistics, subprocess, sys, tempfile, time
d = tempfile.mkdtemp()
subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-subj", "/CN=localhost", "-days", "1", "-keyout", f"{d}/k.pem", "-out", f"{d}/c.pem"],
               check=True, capture_output=True)
env = dict(os.environ, TF_PLUGIN_MAGIC_COOKIE="d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
           PLUGIN_PROTOCOL_VERSIONS="5", PLUGIN_CLIENT_CERT=open(f"{d}/c.pem").read())
times = []
for _ in range(20):
    start = time.perf_counter()
    p = subprocess.Popen([sys.argv[1]], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdout.readline()
    times.append(time.perf_counter() - start)
    p.kill(); p.wait()
print(round(statistics.median(times), 4))
EOF
}

# profile KIND N WORKSPACE: one plan under perf; Terraform's samples as a flame graph and a top list by RESULTS_FILE.
profile() {
  local out; out="$(dirname "$results")/plan-$1-$2"
  log "$1 N=$2: plan under perf -> $out.svg"
  (cd "$3" && perf record -q -F 999 -g -o "$work/perf.data" -- "$tf" plan -detailed-exitcode -input=false -no-color \
    >/dev/null 2>&1) || true
  local fold="$REPO_ROOT/acceptance-tests/bench/fold-go-perf.py" binary comm
  binary=$(readlink -f "$tf"); comm=$(basename "$binary" | cut -c1-15)
  python3 "$fold" "$work/perf.data" "$binary" "$comm" >"$out.folded"
  # Frames under 0.2% of the samples are left out: the graph stays readable and a few hundred KB.
  inferno-flamegraph --minwidth 0.2 --title "terraform plan, $2 $1 ($comm's samples)" <"$out.folded" >"$out.svg"
  python3 "$fold" "$work/perf.data" "$binary" "$comm" --top 40 >"$out.txt"
  rm -f "$work/perf.data"
}

# bench KIND N PLUGIN USER: apply, PLAN_RUNS plans, destroy; one JSON line into $results.
bench() {
  local kind=$1 n=$2 plugin=$3 user=$4 ws="$work/$1-$2"
  mkdir -p "$ws"
  config "$kind" "$n" >"$ws/main.tf"
  # dev_overrides serve modelfleet and the floor without an install (init would look for them in the mirror and fail).
  [ "$kind" = modelfleet_inference ] || [ "$kind" = floor_item ] || (cd "$ws" && "$tf" init -input=false -no-color >/dev/null)
  log "$kind N=$n: apply"
  local apply; apply=$(cd "$ws" && seconds "$tf" apply -auto-approve -input=false -no-color)
  local plans=() tf_cpu=() plugin_cpus=() reqs=0 rss=0 i from
  for ((i = 1; i <= PLAN_RUNS; i++)); do
    rm -f "$work/$plugin.rss"
    from=$(audit_size)
    plans+=("$(cd "$ws" && seconds "${timed[@]}" "$tf" plan -detailed-exitcode -input=false -no-color)")
    tf_cpu+=("$(terraform_cpu)")
    plugin_cpus+=("$(plugin_cpu "$plugin")")
    if [ -n "$user" ]; then reqs=$(requests "$user" "$from"); fi
    rss=$(peak_kib "$plugin")
  done
  if [ "$n" = "$BENCH_PROFILE" ] && [ "$kind" != terraform_data ] && [ "$kind" != kubernetes_manifest ]; then
    profile "$kind" "$n" "$ws"
  fi
  log "$kind N=$n: destroy"
  local destroy; destroy=$(cd "$ws" && seconds "$tf" destroy -auto-approve -input=false -no-color)
  local plan; plan=$(median "${plans[@]}")
  local cpu plugin_cpu_s; cpu=$(median "${tf_cpu[@]}"); plugin_cpu_s=$(median "${plugin_cpus[@]}")
  log "$kind N=$n: apply ${apply}s, plan ${plan}s (runs: ${plans[*]}), requests/plan $reqs, plugin peak ${rss} KiB, CPU per plan: Terraform ${cpu}s, plugin ${plugin_cpu_s}s"
  printf '{"bench":"provider","kind":"%s","n":%s,"apply_s":%s,"plan_s":%s,"plan_runs":[%s],"destroy_s":%s,"requests_per_plan":%s,"plugin_peak_kib":%s,"terraform_cpu_s":%s,"plugin_cpu_s":%s}\n' \
    "$kind" "$n" "$apply" "$plan" "$(IFS=,; echo "${plans[*]}")" "$destroy" "$reqs" "$rss" "$cpu" "$plugin_cpu_s" >>"$results"
}

for binary in modelfleet:"$provider_bin" kubernetes:"$peer_bin" floor:"$floor_bin"; do
  printf '{"bench":"handshake","plugin":"%s","seconds":%s}\n' "${binary%%:*}" "$(handshake "${binary#*:}")" >>"$results"
done
for n in "${sizes[@]}"; do
  bench terraform_data "$n" none ""
  bench floor_item "$n" floor ""
  bench modelfleet_inference "$n" modelfleet model-fleet-bench-provider
  if [ "$n" -le "$BENCH_PEER_MAX_N" ]; then bench kubernetes_manifest "$n" kubernetes model-fleet-bench-peer; fi
done
"${kubectl[@]}" delete namespace "$ns" --wait=false >/dev/null
