#!/usr/bin/env bash
# `make demo` / `make demo-down`: the whole product on the local control plane.
#
#   demo.sh up     bootstrap what is missing, build the operator and provider, install the provider
#                  into the filesystem mirror, start instance `demo`, install the CRDs and the shared
#                  Gateway, install the operator with the Helm chart (its pod on the real node; a
#                  background process where the machine cannot run the real node), `terraform init` (offline) and
#                  `terraform apply` examples/terraform/quickstart, then show what happened
#   demo.sh destroy  terraform destroy only (the operator and the instance keep running)
#   demo.sh down   terraform destroy, stop the operator, stop the instance
#
# Idempotent: a second `up` reuses everything and the apply changes nothing.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
instance=${DEMO_INSTANCE:-demo}
dir="$REPO_ROOT/.local/$instance"
work="$REPO_ROOT/.local/$instance-terraform"
quickstart="$REPO_ROOT/examples/terraform/quickstart"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$MODEL_FLEET_CACHE/target}
operator_pid_file="$REPO_ROOT/.local/$instance-operator.pid"
operator_log="$REPO_ROOT/.local/$instance-operator.log"
operator_build_file="$REPO_ROOT/.local/$instance-operator.build" # what the running operator was started from

step() { printf '\n==> %s\n' "$*" >&2; }

operator_running() {
  local pid; pid=$(cat "$operator_pid_file" 2>/dev/null) || return 1
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "model-fleet-operator run"
}

stop_operator() {
  if operator_running; then
    local pid; pid=$(cat "$operator_pid_file")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do operator_running || break; sleep 0.1; done
  fi
  rm -f "$operator_pid_file" "$operator_build_file"
}

# start_operator BINARY KUBECONFIG: the operator out of cluster, in the background, text logs (for reading) appended
# to $operator_log; fails with the log tail if it exits at once.
start_operator() {
  setsid "$1" run --kubeconfig "$2" \
    --lease-namespace model-fleet-system --default-gateway model-fleet-system/shared \
    --metrics-bind-address 127.0.0.1:0 --log-format text >>"$operator_log" 2>&1 </dev/null &
  echo $! >"$operator_pid_file"
  sleep 1
  operator_running || { tail -n 20 "$operator_log" >&2; die "the operator exited at start (log: $operator_log)"; }
}

# run_operator_process KUBECONFIG: the debug operator out of cluster, restarted when its build or the instance changed.
run_operator_process() {
  local operator_bin="$CARGO_TARGET_DIR/debug/model-fleet-operator" build
  # The same binary against the same instance (a re-created instance has a new kubeconfig) keeps running.
  build=$(stat -c '%n %Y %s' "$operator_bin" "$1")
  if operator_running && [ "$(cat "$operator_build_file" 2>/dev/null)" = "$build" ]; then
    step "the operator is already running this build (pid $(cat "$operator_pid_file"))"
  else
    if operator_running; then
      step "restarting the operator (a new build, or a re-created instance)"
      stop_operator
    else
      step "starting the operator"
    fi
    start_operator "$operator_bin" "$1"
    echo "$build" >"$operator_build_file"
  fi
  operator_hint="operator log: $operator_log"
  echo "$operator_hint" >&2
}

# install_operator_chart KUBECTL KUBECONFIG: `make image`, the image into the real node's registry, then
# `helm upgrade --install` with the kind profile adjusted for this cluster: the pod on the real node (its label and
# taint), the demo's Gateway (manifests/gateway.yaml) instead of the chart's. The pod template carries the image's
# checksum, so a new build rolls the pod and an unchanged one leaves it running.
install_operator_chart() {
  stop_operator # a process left by a demo of an earlier version
  step "make image (the operator's static binary in an OCI image) and loading it into the real node's registry"
  "$REPO_ROOT/images/operator.sh" build
  "$REPO_ROOT/images/operator.sh" load "$instance"
  local version sum current helm
  version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$REPO_ROOT/Cargo.toml")
  sum=$(sha256sum "$REPO_ROOT/.local/images/model-fleet-operator-$version-linux-amd64.tar" | cut -c1-16)
  current=$("$1" --kubeconfig "$2" get deployment model-fleet -n model-fleet-system --ignore-not-found \
    -o jsonpath='{.spec.template.metadata.annotations.modelfleet\.io/image-sha256}/{.status.readyReplicas}')
  if [ "$current" = "$sum/1" ]; then
    step "the operator is already running this build (chart release model-fleet, image sha256 $sum...)"
  else
    if [ -n "$current" ]; then step "restarting the operator: helm upgrade (a new build)"; else step "restarting the operator: helm install (a new instance)"; fi
    helm=$(source "$REPO_ROOT/acceptance-tests/infra/scripts/lib.sh" && helm_bin)
    [ -x "$helm" ] || die "the helm CLI is missing ($helm): run make bootstrap"
    KUBECONFIG="$2" "$helm" upgrade --install model-fleet "$REPO_ROOT/charts/model-fleet-operator" \
      --namespace model-fleet-system --create-namespace --set profile=kind \
      --set-string image.repository=modelfleet.local/model-fleet-operator --set-string "image.tag=$version" \
      --set image.pullPolicy=Always --set-string "podAnnotations.modelfleet\.io/image-sha256=$sum" \
      --set-string 'nodeSelector.modelfleet\.io/real-node=true' --set-string 'tolerations[0].key=modelfleet.io/real-node' \
      --set-string 'tolerations[0].operator=Exists' --set-string 'tolerations[0].effect=NoSchedule' \
      --set gateway.create=false --wait --timeout 180s >/dev/null ||
      die "helm upgrade --install failed; the operator pod: $1 --kubeconfig $2 describe pods -n model-fleet-system"
  fi
  operator_hint="operator: $1 get pods -n model-fleet-system -o wide; its log: $1 logs -n model-fleet-system deployment/model-fleet"
  echo "$operator_hint" >&2
}

terraform_env() {
  tf=$("$CLUSTER_DIR/scripts/tf-bin.sh")
  export TF_CLI_CONFIG_FILE="$work/mirror.tfrc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
  export TF_VAR_kubeconfig_path="$dir/kubeconfig"
  # Without a real node (this machine cannot run one) the echo service goes to the simulated nodes.
  if [ -f "$dir/node/unavailable" ]; then export TF_VAR_real_node=false; else unset TF_VAR_real_node; fi
}

cmd_up() {
  local t0=$SECONDS
  step "bootstrap (the first run builds the control plane from source: about 22 minutes on 2 cores; later runs take a second)"
  "$CLUSTER_DIR/scripts/bootstrap.sh"

  step "building the operator and the provider"
  (cd "$REPO_ROOT" && cargo build --bin model-fleet-operator --bin terraform-provider-modelfleet)
  mkdir -p "$work"
  # Packing the debug binary into the mirror takes seconds: only when it changed.
  local provider_bin="$CARGO_TARGET_DIR/debug/terraform-provider-modelfleet" provider_build
  provider_build=$(stat -c '%n %Y %s' "$provider_bin")
  if [ "$(cat "$work/provider.build" 2>/dev/null)" != "$provider_build" ] || [ ! -d "$work/mirror/registry.opentofu.org" ]; then
    MIRROR="$work/mirror" DIST="$work/dist" PROVIDER_BINARY="$provider_bin" \
      "$REPO_ROOT/provider/scripts/install.sh" >/dev/null
    echo "$provider_build" >"$work/provider.build"
  fi
  cat >"$work/mirror.tfrc" <<EOF
provider_installation {
  filesystem_mirror {
    path    = "$work/mirror"
    include = ["registry.terraform.io/modelfleet/modelfleet", "registry.opentofu.org/modelfleet/modelfleet"]
  }
  direct {
    exclude = ["registry.terraform.io/modelfleet/modelfleet", "registry.opentofu.org/modelfleet/modelfleet"]
  }
}
EOF

  step "starting control plane instance '$instance'"
  local fresh=1
  "$CLUSTER_DIR/scripts/cluster.sh" status "$instance" >/dev/null 2>&1 && fresh=0
  "$CLUSTER_DIR/scripts/cluster.sh" up "$instance" >/dev/null
  # A new instance starts with an empty etcd: a state left by an earlier demo describes a cluster that is gone, and
  # the provider rightly refuses to treat it as this one (cluster identity). Start from an empty state, kept aside.
  if [ "$fresh" = 1 ] && [ -f "$work/config/terraform.tfstate" ]; then
    local kept
    kept="$work/config/terraform.tfstate.$(date +%s).earlier-instance"
    mv "$work/config/terraform.tfstate" "$kept"
    rm -f "$work/config/terraform.tfstate.backup"
    echo "the Terraform state of an earlier instance (now gone) is kept as $kept; this apply starts from an empty state" >&2
  fi
  local kubectl="$dir/bin/kubectl" kubeconfig="$dir/kubeconfig"
  "$kubectl" --kubeconfig "$kubeconfig" apply --server-side --field-manager=model-fleet-demo \
    -f "$REPO_ROOT/charts/model-fleet-operator/crds/" -f "$CLUSTER_DIR/manifests/gateway.yaml" >/dev/null
  "$kubectl" --kubeconfig "$kubeconfig" wait --for=condition=Established crd --all --timeout=60s >/dev/null
  "$kubectl" --kubeconfig "$kubeconfig" create namespace demo --dry-run=client -o yaml |
    "$kubectl" --kubeconfig "$kubeconfig" apply --server-side --field-manager=model-fleet-demo -f - >/dev/null

  if [ -f "$dir/node/unavailable" ]; then
    step "no real node on this machine ($(cat "$dir/node/unavailable")): the operator runs as a background process instead of the chart's pod"
    run_operator_process "$kubeconfig"
  else
    install_operator_chart "$kubectl" "$kubeconfig"
  fi

  step "terraform init (offline, from the filesystem mirror) and apply"
  terraform_env
  mkdir -p "$work/config"
  rm -f "$work/config"/*.tf # a file dropped from the quickstart must not linger from an earlier demo
  cp "$quickstart"/*.tf "$work/config/"
  # Its "Outputs:" section is cut: `terraform output` below prints them once, after the plan check (a new user saw
  # them twice).
  (cd "$work/config" && "$tf" init -input=false -no-color >/dev/null &&
    "$tf" apply -auto-approve -input=false -no-color | sed '/^Outputs:$/,$d')

  local plan_rc=0
  (cd "$work/config" && "$tf" plan -detailed-exitcode -input=false -no-color >"$work/plan.txt") || plan_rc=$?
  case $plan_rc in
    0) echo "terraform plan right after apply: no changes" >&2 ;;
    *) cat "$work/plan.txt" >&2; die "terraform plan right after apply is not clean (exit $plan_rc): a perpetual diff" ;;
  esac

  step "terraform output"
  (cd "$work/config" && "$tf" output -no-color)
  step "kubectl get isvc,trun,mfds,deploy,svc,scaledobject,httproute,job,pods -n demo -o wide"
  "$kubectl" --kubeconfig "$kubeconfig" get isvc,trun,mfds,deploy,svc,scaledobject,httproute,job,pods -n demo -o wide
  step "what each resource is doing"
  explain "$kubectl" "$kubeconfig"
  curl_echo "$kubectl" "$kubeconfig"
  step "explore it"
  cat >&2 <<EOF
  export KUBECONFIG=$kubeconfig
  $kubectl get isvc,trun,mfds -A
  $operator_hint
  change it: edit examples/terraform/quickstart/main.tf and run make demo again
  stop everything: make demo-down
  (demo took $((SECONDS - t0))s)
EOF
}

# curl_echo KUBECTL KUBECONFIG: the echo service answering through its Service, with the command that
# does it. Service addresses exist only inside the real node's network namespace (kube-proxy runs
# there), so the request is sent from inside it; `kubectl port-forward` reaches it over loopback.
curl_echo() {
  if [ -f "$dir/node/unavailable" ]; then
    step "the echo service"
    echo "  no real node on this machine ($(cat "$dir/node/unavailable")): the echo pods run on simulated nodes and do not answer" >&2
    return
  fi
  local netns ip
  netns=$(sed -n 's/^NODE_NETNS=//p' "$dir/node/node.env")
  ip=$("$1" --kubeconfig "$2" get service echo -n demo -o jsonpath='{.spec.clusterIP}')
  step "the echo service answers through its Service (from inside the real node's network namespace)"
  echo "  ip netns exec $netns curl -s http://$ip/" >&2
  # Ready pods answer through the Service once kube-proxy has programmed its rules from the new EndpointSlice,
  # which follows readiness by a sync period (longer on a loaded machine): tries a second apart for up to 60 s.
  local body="" error="" deadline=$((SECONDS + 60))
  until body=$(ip netns exec "$netns" curl -sSf --connect-timeout 2 --max-time 5 "http://$ip/" 2>&1) && [ -n "$body" ]; do
    error=${body:-an empty answer}
    [ "$SECONDS" -lt "$deadline" ] ||
      die "the echo service did not answer through its Service at $ip within 60 s: $error (log: $REPO_ROOT/.local/$instance/node/logs/)"
    sleep 1
  done
  sed 's/^/    /' <<<"$body" >&2
  echo "  or over loopback: $1 --kubeconfig $2 port-forward -n demo service/echo 8080:80, then curl -s http://127.0.0.1:8080/" >&2
}

# explain KUBECTL KUBECONFIG: one line per Model Fleet resource in namespace demo, from its status.
explain() {
  "$1" --kubeconfig "$2" get isvc,trun,mfds,pods -n demo -o json | jq -r '
    def cond($t): ((.status.conditions // []) | map(select(.type == $t)) | first) // {};
    (.items | map(select(.kind == "Pod")) | map({key: (.metadata.labels["modelfleet.io/inference-service"] // .metadata.labels["job-name"] // ""), value: (.spec.nodeName // "no node")}) | group_by(.key) | map({key: .[0].key, value: (map(.value) | unique | join(", "))}) | from_entries) as $nodes
    | .items[] | select(.kind != "Pod") | .metadata.name as $n
    | if .kind == "InferenceService" then
        cond("Ready") as $r
        | if $r.reason == "Unschedulable" then "\($n): Pending, no \(.status.capacityClass // "matching") node: a capacity provider such as Karpenter would add one"
          elif ((.spec.replicas.min // 1) == 0) and ((.status.replicas // 0) == 0) then "\($n): 0 replicas until its queue has work (born at its floor, no GPU held), GPU class \(.status.capacityClass // "-"); no KEDA runs locally: kubectl scale deployment/\($n) -n demo --replicas=1 plays KEDA"
          elif ((.spec.replicas.min // 1) == 0) then "\($n): Ready=\($r.status), \(.status.readyReplicas // 0) replica(s) on \($nodes[$n] // "-"); KEDA scales it to zero when the queue is empty (no KEDA controller runs locally)"
          elif $r.status == "True" then "\($n): Ready, \(.status.readyReplicas) replica(s) on \($nodes[$n] // "-")\(if .status.url then ", routed at \(.status.url) (no Gateway data plane locally)" else "" end)\(if .status.capacityClass then ", GPU class \(.status.capacityClass), \(.status.perGpuMemoryGiB) GiB per GPU" else "" end)"
          else "\($n): \($r.reason // "no status yet"): \($r.message // "is the operator running?")" end
      elif .kind == "TrainingRun" then
        "\($n): \(.status.phase // "no status yet") (Job \(.status.jobName // "-") on \($nodes[.status.jobName // ""] // "-")\(if .status.capacityClass then ", GPU class \(.status.capacityClass)" else "" end))"
      else
        "\($n): dataset version \(.spec.version), Ready=\(cond("Ready").status // "unknown")\(if (.status.usedBy // []) | length > 0 then ", used by \(.status.usedBy | join(", "))" else ", not used by an unfinished run" end)"
      end'
}

cmd_destroy() {
  if [ -f "$work/config/terraform.tfstate" ] && [ -f "$dir/kubeconfig" ]; then
    step "terraform destroy"
    terraform_env
    (cd "$work/config" && "$tf" destroy -auto-approve -input=false -no-color | grep -E '^Destroy complete')
  fi
}

cmd_down() {
  cmd_destroy
  step "stopping the operator and instance '$instance'"
  stop_operator
  "$CLUSTER_DIR/scripts/cluster.sh" down "$instance"
  rm -rf "$work" "$operator_log"
}

case ${1:-} in
  up) cmd_up ;;
  destroy) cmd_destroy ;;
  down) cmd_down ;;
  *) echo "usage: demo.sh up|destroy|down" >&2; exit 2 ;;
esac
