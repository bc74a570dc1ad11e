#!/usr/bin/env bash
# Lifecycle of a named local control plane instance: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and kwok (simulated kubelets), all on free loopback ports, state under
# <repo>/.local/<instance>/ (git-ignored), plus one real node `real-1` (kubelet, containerd, CNI,
# kube-proxy in a network namespace of its own; see node.sh) when the machine can run it
# (MODEL_FLEET_REAL_NODE=0: never; `status` says why there is none). Several instances run side by
# side: `make test` uses its own and never touches the `demo` one.
#
#   cluster.sh up NAME [--no-upstream-crds]   start (or reuse) NAME; prints its kubeconfig path
#   cluster.sh down NAME                      stop exactly the processes NAME started; remove its data
#   cluster.sh status NAME                    components, pids, ports, /readyz
#   cluster.sh restart NAME COMPONENT [--kill]
#                                             stop one component (SIGTERM; SIGKILL with --kill) and start it
#                                             again with the same command line, then wait until it is ready
#                                             (the fault drills of `make drills`)
#   cluster.sh kubeconfig NAME [USER [GROUP...]]
#                                             print the admin kubeconfig path, or write (once) and print
#                                             a kubeconfig authenticating as USER (client certificate
#                                             signed by the instance CA; GROUPs become organisations)
#
# RBAC is on, clients authenticate with certificates, service accounts get signed tokens, and every
# write request is audited to .local/NAME/audit.log (JSON lines; see manifests/audit-policy.yaml).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 instance=$2; shift 2
[[ "$instance" =~ ^[a-z0-9][a-z0-9-]{0,40}$ ]] || die "instance name '$instance' must be lower-case letters, digits and dashes"
dir="$REPO_ROOT/.local/$instance"
pki="$dir/pki"
components=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

# ---------- processes ----------
pid_of() { cat "$dir/pids/$1.pid" 2>/dev/null || true; }
# alive COMPONENT: the recorded pid runs and is still the binary we started (guards against pid reuse).
alive() { pid_runs "$(pid_of "$1")" "$dir"; }
log_tail() { echo "--- last lines of $dir/logs/$1.log ---" >&2; tail -n 25 "$dir/logs/$1.log" >&2 2>/dev/null || true; }
dead() { log_tail "$1"; die "$1 exited during start-up of instance '$instance' (log: $dir/logs/$1.log). If a port was taken, run: make cluster-down INSTANCE=$instance && make cluster-up INSTANCE=$instance"; }

# start COMPONENT BINARY ARGS...: run detached in its own session, stdout+stderr to its log.
start() {
  local name=$1 bin=$2; shift 2
  [ -x "$bin" ] || die "$bin is missing: run 'make bootstrap' (builds the control plane into $MODEL_FLEET_CACHE)"
  setsid "$bin" "$@" >"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/$name.pid"
  # Until the forked shell has exec'd the binary its cmdline is still this script's, and `alive`
  # would call a component dead that has not started yet (seen on a loaded machine). Wait for the
  # exec (at most 10 s); a binary that exits at once is reported by the caller's wait with its log.
  local i
  for i in $(seq 100); do
    alive "$name" && return 0
    [ -r "/proc/$!/cmdline" ] && [ -n "$(tr -d '\0' <"/proc/$!/cmdline")" ] || return 0
    sleep 0.1
  done
}

# wait_until COMPONENT SECONDS CHECK...: poll CHECK every 0.2 s; fail with the log if the process dies.
wait_until() {
  local name=$1 timeout=$2; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    alive "$name" || dead "$name"
    [ $SECONDS -lt $deadline ] || { log_tail "$name"; die "$name did not become ready within ${timeout}s (log: $dir/logs/$name.log)"; }
    sleep 0.2
  done
}

free_ports() { # N: print N distinct free loopback ports
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

port_free() { python3 -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null; }

# ---------- PKI ----------
# sign_cert NAME CN ORG EXT: key + certificate signed by the instance CA.
sign_cert() {
  local name=$1 cn=$2 org=$3 ext=$4 subj="/CN=$2"
  [ -n "$org" ] && subj="$subj$org"
  openssl req -new -newkey rsa:2048 -nodes -keyout "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" 2>/dev/null
  printf '%s\n' "$ext" >"$pki/$name.ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 30 \
    -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}
client_ext="keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"

make_pki() {
  mkdir -p "$pki"
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$pki/ca.key" -subj "/CN=model-fleet-local-ca" \
    -days 30 -out "$pki/ca.crt" 2>/dev/null
  sign_cert apiserver kube-apiserver "" "keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:10.0.0.1${NODE_APISERVER_IP:+,IP:$NODE_APISERVER_IP},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  sign_cert admin admin "/O=system:masters" "$client_ext"
  # The API server's identity towards kubelets (logs, exec, port-forward).
  sign_cert apiserver-kubelet-client kube-apiserver-kubelet-client "/O=system:masters" "$client_ext"
  sign_cert kube-controller-manager system:kube-controller-manager "/O=system:masters" "$client_ext"
  sign_cert kube-scheduler system:kube-scheduler "/O=system:masters" "$client_ext"
  sign_cert kwok kwok-controller "/O=system:masters" "$client_ext"
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

# write_kubeconfig FILE CERT_NAME [USER]: kubeconfig for the user whose cert/key are pki/CERT_NAME.{crt,key}.
write_kubeconfig() {
  local file=$1 cert=$2 name=${3:-$2}
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $instance
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
- name: $name
  user:
    client-certificate-data: $(base64 -w0 <"$pki/$cert.crt")
    client-key-data: $(base64 -w0 <"$pki/$cert.key")
contexts:
- name: $instance
  context: {cluster: $instance, user: $name}
current-context: $instance
EOF
}

kubectl_bin() { echo "$(kubernetes_bin_dir)/kubectl"; }
kc() { "$(kubectl_bin)" --kubeconfig "$dir/kubeconfig" "$@"; }
readyz() { curl -sf --max-time 2 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "https://127.0.0.1:$APISERVER_PORT/readyz"; }

# ---------- commands ----------
cmd_up() {
  local upstream_crds=1
  for a in "$@"; do
    case $a in --no-upstream-crds) upstream_crds=0 ;; *) usage ;; esac
  done
  require_go
  # Kubeconfigs and keys carry cluster-admin credentials: readable by this user only.
  umask 077
  local kbin ebin wbin
  kbin=$(kubernetes_bin_dir) ebin=$(etcd_bin_dir) wbin=$(kwok_bin_dir)
  for d in "$kbin" "$ebin" "$wbin"; do
    [ -f "$d/.complete" ] || die "control plane binaries missing in $d: run 'make bootstrap' first (a cold build takes about 22 minutes on 2 cores)"
  done

  if [ -f "$dir/ports.env" ]; then
    local all=1 any=0
    for c in "${components[@]}"; do if alive "$c"; then any=1; else all=0; fi; done
    if [ -f "$dir/node/node.env" ] && ! "$CLUSTER_DIR/scripts/node.sh" status "$instance" >/dev/null 2>&1; then all=0; fi
    if [ $all = 1 ] && [ -f "$dir/ready" ]; then
      source "$dir/ports.env"
      if readyz >/dev/null 2>&1; then
        log "instance '$instance' is already running"
        echo "$dir/kubeconfig"
        return
      fi
    fi
    if [ $any = 1 ]; then
      log "instance '$instance' is partly running (leftovers from an earlier run): stopping it first"
    else
      log "instance '$instance' left data from an earlier run that was not stopped: removing it"
    fi
    cmd_down >/dev/null
  fi

  local t0=$SECONDS
  read -r ETCD_PORT ETCD_PEER_PORT APISERVER_PORT KWOK_PORT <<<"$(free_ports 4)"
  # A fixed API server port on request (MODEL_FLEET_APISERVER_PORT), e.g. for a stable demo URL.
  if [ -n "${MODEL_FLEET_APISERVER_PORT:-}" ]; then
    APISERVER_PORT=$MODEL_FLEET_APISERVER_PORT
    port_free "$APISERVER_PORT" || die "port $APISERVER_PORT (MODEL_FLEET_APISERVER_PORT) is in use by another process ($(ss -ltnpH "sport = :$APISERVER_PORT" 2>/dev/null | grep -o 'users:.*' | head -1)): pick another port or unset it to use a free one"
  fi
  mkdir -p "$dir/pids" "$dir/logs" "$dir/etcd"
  printf 'ETCD_PORT=%s\nETCD_PEER_PORT=%s\nAPISERVER_PORT=%s\nKWOK_PORT=%s\n' \
    "$ETCD_PORT" "$ETCD_PEER_PORT" "$APISERVER_PORT" "$KWOK_PORT" >"$dir/ports.env"
  # The real node's addresses are needed before the API server starts: it advertises the address
  # the node's pods reach it at (the `kubernetes` Service) and its certificate names it.
  "$CLUSTER_DIR/scripts/node.sh" plan "$instance"
  local NODE_APISERVER_IP=""
  if [ -f "$dir/node/node.env" ]; then
    NODE_APISERVER_IP=$(sed -n 's/^NODE_APISERVER_IP=//p' "$dir/node/node.env")
  fi
  make_pki
  mkdir -p "$dir/bin"; ln -sfn "$kbin/kubectl" "$dir/bin/kubectl"
  write_kubeconfig "$dir/kubeconfig" admin
  for c in kube-controller-manager kube-scheduler kwok; do write_kubeconfig "$dir/$c.kubeconfig" "$c"; done

  log "starting etcd on 127.0.0.1:$ETCD_PORT"
  start etcd "$ebin/etcd" --name=default --data-dir="$dir/etcd" \
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="default=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync=true --log-level=warn
  wait_until etcd 30 curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health"

  log "starting kube-apiserver ${KUBERNETES_VERSION} on https://127.0.0.1:$APISERVER_PORT"
  start kube-apiserver "$kbin/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --secure-port="$APISERVER_PORT" --bind-address=127.0.0.1 --advertise-address="${NODE_APISERVER_IP:-127.0.0.1}" \
    --cert-dir="$dir/apiserver-certs" --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction,OwnerReferencesPermissionEnforcement \
    --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$pki/ca.crt" --kubelet-preferred-address-types=InternalIP --allow-privileged=true \
    --service-cluster-ip-range="$SERVICE_CIDR" --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --audit-policy-file="$CLUSTER_DIR/manifests/audit-policy.yaml" --audit-log-path="$dir/audit.log" \
    --audit-log-format=json --audit-log-mode=blocking --enable-priority-and-fairness=false \
    --profiling=false --v=1
  wait_until kube-apiserver 90 readyz

  log "starting kube-controller-manager, kube-scheduler and kwok"
  start kube-controller-manager "$kbin/kube-controller-manager" --kubeconfig="$dir/kube-controller-manager.kubeconfig" \
    --leader-elect=false --secure-port=0 --service-account-private-key-file="$pki/sa.key" \
    --root-ca-file="$pki/ca.crt" --use-service-account-credentials=false --cluster-name="$instance" \
    --controllers='*,-bootstrapsigner,-tokencleaner' --profiling=false --v=1
  start kube-scheduler "$kbin/kube-scheduler" --kubeconfig="$dir/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig="$dir/kube-scheduler.kubeconfig" --authorization-kubeconfig="$dir/kube-scheduler.kubeconfig" \
    --leader-elect=false --secure-port=0 --profiling=false --v=1
  # Simulated nodes report 127.0.0.1 as their address: anything that dials a kwok node (the API server for
  # logs or exec) stays on loopback (the network rule), never 10.x routed out of this machine.
  start kwok "$wbin/kwok" --kubeconfig="$dir/kwok.kubeconfig" --config="$CLUSTER_DIR/manifests/kwok-stages.yaml" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --cidr=10.244.0.0/16 --node-ip=127.0.0.1 --server-address="127.0.0.1:$KWOK_PORT"

  # The default ServiceAccount appears once the controller-manager runs: a fair sign that it works.
  wait_until kube-controller-manager 60 kc get serviceaccount default -n default
  alive kube-scheduler || dead kube-scheduler
  alive kwok || dead kwok

  kc apply --server-side --field-manager=model-fleet-cluster -f "$CLUSTER_DIR/manifests/nodes.yaml" >/dev/null
  wait_until kwok 60 kc wait --for=condition=Ready node --all --timeout=2s

  if [ -f "$dir/node/node.env" ]; then
    "$CLUSTER_DIR/scripts/node.sh" start "$instance" ||
      die "the real node of instance '$instance' did not start (above). The machine can run one, so this is a bug to fix; MODEL_FLEET_REAL_NODE=0 starts the instance without it"
  fi

  if [ $upstream_crds = 1 ]; then
    log "installing Gateway API ${GATEWAY_API_VERSION}, KEDA ${KEDA_VERSION} and KEDA HTTP add-on ${KEDA_HTTP_ADD_ON_VERSION} CRDs"
    local crds; crds=$("$CLUSTER_DIR/scripts/upstream-crds.sh")
    kc apply --server-side --field-manager=model-fleet-cluster -f "$crds/gateway-api/" -f "$crds/keda/" \
      -f "$crds/keda-http/" >/dev/null
    kc wait --for=condition=Established crd --all --timeout=60s >/dev/null
  fi
  touch "$dir/ready" # only a completed start-up is reused by the next `up`
  log "instance '$instance' ready in $((SECONDS - t0))s (kube-apiserver https://127.0.0.1:$APISERVER_PORT)"
  log "use it: export KUBECONFIG=$dir/kubeconfig"
  echo "$dir/kubeconfig"
}

cmd_down() {
  [ -d "$dir" ] || { log "instance '$instance' is not running"; return 0; }
  # Reverse start order so the API server outlives its clients.
  for ((i = ${#components[@]} - 1; i >= 0; i--)); do
    local c=${components[$i]}
    if alive "$c"; then
      local pid; pid=$(pid_of "$c")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do alive "$c" || break; sleep 0.1; done
      alive "$c" && kill -9 "$pid" 2>/dev/null || true
    fi
  done
  # The node after the API server: nothing on the host dials the node's addresses any more.
  "$CLUSTER_DIR/scripts/node.sh" stop "$instance"
  rm -rf "$dir"
  log "instance '$instance' stopped and its data removed"
  local demo_operator; demo_operator=$(cat "$REPO_ROOT/.local/$instance-operator.pid" 2>/dev/null) || true
  if [ -n "$demo_operator" ] && tr '\0' ' ' <"/proc/$demo_operator/cmdline" 2>/dev/null | grep -q "model-fleet-operator run"; then
    log "note: the demo's operator (pid $demo_operator) still runs and retries against the stopped instance; 'make demo-down' stops it, 'make demo' restarts it"
  fi
}

cmd_status() {
  [ -f "$dir/ports.env" ] || { echo "instance '$instance': not running"; return 3; }
  source "$dir/ports.env"
  local rc=0
  for c in "${components[@]}"; do
    if alive "$c"; then echo "$c: running (pid $(pid_of "$c"))"; else echo "$c: NOT running (log: $dir/logs/$c.log)"; rc=1; fi
  done
  echo "kube-apiserver: https://127.0.0.1:$APISERVER_PORT, etcd: http://127.0.0.1:$ETCD_PORT"
  if readyz >/dev/null 2>&1; then echo "readyz: ok"; else echo "readyz: FAILING"; rc=1; fi
  echo "kubeconfig: $dir/kubeconfig"
  "$CLUSTER_DIR/scripts/node.sh" status "$instance" || rc=1
  return $rc
}

cmd_restart() {
  [ -f "$dir/ports.env" ] || die "instance '$instance' is not running: make cluster-up INSTANCE=$instance"
  source "$dir/ports.env"
  local c=${1:-} sig=TERM pid
  [ "${2:-}" = --kill ] && sig=KILL
  case " ${components[*]} " in *" $c "*) ;; *) die "unknown component '$c' (one of: ${components[*]})" ;; esac
  alive "$c" || die "$c of instance '$instance' is not running (log: $dir/logs/$c.log)"
  pid=$(pid_of "$c")
  local -a argv
  mapfile -d '' argv <"/proc/$pid/cmdline"
  kill "-$sig" "$pid"
  for _ in $(seq 100); do alive "$c" || break; sleep 0.1; done
  if alive "$c"; then kill -9 "$pid"; for _ in $(seq 50); do alive "$c" || break; sleep 0.1; done; fi
  mv "$dir/logs/$c.log" "$dir/logs/$c.log.$(date +%s)"
  start "$c" "${argv[@]}"
  case $c in
    etcd) wait_until etcd 30 curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" ;;
    kube-apiserver) wait_until kube-apiserver 90 readyz ;;
    *) sleep 1; alive "$c" || dead "$c" ;;
  esac
  log "$c of instance '$instance' restarted (SIG$sig, pid $pid -> $(pid_of "$c"))"
}

cmd_kubeconfig() {
  [ -f "$dir/ports.env" ] || die "instance '$instance' is not running: make cluster-up INSTANCE=$instance"
  if [ $# -eq 0 ]; then echo "$dir/kubeconfig"; return; fi
  source "$dir/ports.env"
  local user=$1; shift
  [[ "$user" =~ ^[A-Za-z0-9:._@-]+$ ]] || die "user name '$user' has characters a certificate subject cannot carry here"
  local file="$dir/users/$user.kubeconfig" org=""
  for g in "$@"; do org="$org/O=$g"; done
  mkdir -p "$dir/users"
  exec 8>"$dir/users/.lock"; flock 8
  if [ ! -f "$file" ]; then
    sign_cert "user-$user" "$user" "$org" "$client_ext"
    write_kubeconfig "$file.tmp" "user-$user" "$user" && mv "$file.tmp" "$file"
  fi
  echo "$file"
}

case $cmd in
  up) cmd_up "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  kubeconfig) cmd_kubeconfig "$@" ;;
  restart) cmd_restart "$@" ;;
  *) usage ;;
esac
