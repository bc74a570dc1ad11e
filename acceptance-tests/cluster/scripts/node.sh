#!/usr/bin/env bash
# The real node `real-1` of a local cluster instance: kubelet, containerd (with Debian's runc), the
# CNI bridge and kube-proxy (nftables mode), so its pods run real containers. cluster.sh drives it;
# run it by hand only to look or to restart a stopped kubelet.
#
#   node.sh check                  exit 0 when this machine can run a real node, else print why not
#   node.sh plan INSTANCE          pick a free slot and write .local/INSTANCE/node/node.env (its
#                                  addresses), or .local/INSTANCE/node/unavailable with the reason
#   node.sh start INSTANCE         set up its namespaces and start everything; wait until Ready
#   node.sh kubelet INSTANCE       start the kubelet again if it is not running (pods keep running)
#   node.sh stop INSTANCE          stop everything by pid, then remove its containers, mounts,
#                                  network devices, routes, cgroups and data; free the slot
#   node.sh status INSTANCE        processes, addresses, how to reach a Service
#
# Network boundary: the node (kubelet, containerd, kube-proxy, the registry, every pod) lives in a
# network namespace of its own, `modelfleet-<slot>`, with no default route: its pods, its bridge and
# its Service addresses exist only there, and a packet to any other address has no way out. The
# only link to the host is a veth pair (10.241.<slot>.1 on the host, .2 in the node): the API server
# reaches the kubelet over it. The node reaches the API server (which listens on the host's
# 127.0.0.1 only) through a unix socket: socat listens on 10.240.<slot>.1:<API port> in the node
# (also the `kubernetes` Service's endpoint, so pods can use the API) and forwards to the host's
# loopback. From the host: `ip netns exec modelfleet-<slot> curl http://<ClusterIP>/`, or
# `kubectl port-forward`.
#
# Host state it keeps to itself: processes run in cgroup /modelfleet-node-<slot> (cgroupfs driver;
# cgroup v1 or v2), mounts happen in a private mount namespace (pod volumes, overlay snapshots,
# /var/log), and the kubelet sees files holding the sysctl values it wants (vm.overcommit_memory=1,
# kernel.panic=10, kernel.panic_on_oops=1) instead of changing the host's.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

NODE_NAME=real-1
# Label and taint of the real node: only pods that ask for it (nodeSelector + toleration) land
# there, so pods meant for the simulated nodes (whose images do not exist) never do.
NODE_LABEL=modelfleet.io/real-node
SLOTS_DIR=/run/model-fleet/slots
MAX_SLOT=200

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# ---------- what the machine offers ----------
# cgroup_mode: v2 (unified hierarchy at /sys/fs/cgroup), v1 (legacy or hybrid) or none.
cgroup_mode() {
  if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then echo v2
  elif awk '$3 == "cgroup" {found=1} END {exit !found}' /proc/mounts; then echo v1
  else echo none; fi
}
# cgroup_roots: every mounted cgroup hierarchy (v1 controllers, named ones, the hybrid unified one).
cgroup_roots() { awk '$3 == "cgroup" || $3 == "cgroup2" {print $2}' /proc/mounts; }

# why_not: prints why this machine cannot run a real node (nothing when it can): limits of the
# machine, which no script of ours can lift.
why_not() {
  [ "$(id -u)" = 0 ] || { echo "needs root (network namespaces, veth pairs, cgroups and mounts)"; return; }
  grep -qw overlay /proc/filesystems || { echo "the kernel has no overlay filesystem (containerd's snapshotter needs it)"; return; }
  [ -d /proc/sys/net/bridge ] || { echo "the kernel has no bridge netfilter (br_netfilter): Service traffic between pods on the bridge needs it"; return; }
  case $(cgroup_mode) in
    none) echo "no cgroup filesystem is mounted under /sys/fs/cgroup"; return ;;
    v1) local c
        for c in cpu cpuacct cpuset memory pids; do
          [ -d "/sys/fs/cgroup/$c" ] || { echo "cgroup v1 controller $c is not mounted at /sys/fs/cgroup/$c"; return; }
        done ;;
    v2) local have; have=$(cat /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null)
        for c in cpu memory pids; do
          grep -qw "$c" <<<"$have" || { echo "cgroup v2 controller $c is not enabled in /sys/fs/cgroup/cgroup.subtree_control"; return; }
        done ;;
  esac
  command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || { echo "'ip netns' does not work here (iproute2)"; return; }
}

# missing_parts: what `make bootstrap` should have installed or built and did not (nothing when
# all is there). Unlike why_not, this is fixable: cluster.sh refuses to start without it.
missing_parts() {
  local t d
  for t in nsenter unshare setsid socat nft runc flock curl; do
    command -v "$t" >/dev/null || { echo "$t is missing: run 'make bootstrap' (installs runc, nftables and socat from Debian; nsenter, unshare, setsid, flock come with util-linux)"; return; }
  done
  for d in "$(kubernetes_node_bin_dir)" "$(containerd_bin_dir)" "$(cni_plugins_bin_dir)" "$(crane_bin_dir)"; do
    [ -f "$d/.complete" ] || { echo "$d is missing: run 'make bootstrap' (builds kubelet, kube-proxy, containerd, the CNI plugins and crane)"; return; }
  done
  # Our images follow images/: rebuilt here in seconds when it changed.
  if [ ! -f "$(images_dir)/.complete" ]; then
    "$CLUSTER_DIR/scripts/build.sh" --images >&2 || { echo "building our images (images/) failed (output above)"; return; }
  fi
}

# ---------- slots: machine-wide unique addresses, names and cgroups ----------
slot_env() { # SLOT: the node's names and addresses, derived from its slot only
  local n=$1
  cat <<EOF
NODE_NAME=$NODE_NAME
NODE_SLOT=$n
NODE_NETNS=modelfleet-$n
NODE_HOST_IF=mfnode$n
NODE_HOST_IP=10.241.$n.1
NODE_IP=10.241.$n.2
NODE_POD_CIDR=10.240.$n.0/24
NODE_APISERVER_IP=10.240.$n.1
NODE_REGISTRY=127.0.0.1:5000
NODE_RUN=/run/model-fleet/node-$n
NODE_DATA=/var/lib/model-fleet/node-$n
NODE_CGROUP=modelfleet-node-$n
EOF
}

# load INSTANCE: the instance's paths and, when planned, its node.env.
load() {
  instance=$1
  [[ "$instance" =~ ^[a-z0-9][a-z0-9-]{0,40}$ ]] || die "instance name '$instance' must be lower-case letters, digits and dashes"
  dir="$REPO_ROOT/.local/$instance"
  ndir="$dir/node"
  pki="$dir/pki"
  if [ -f "$ndir/node.env" ]; then
    # shellcheck disable=SC1091
    source "$ndir/node.env"
  fi
}

planned() { [ -f "$ndir/node.env" ]; }

cmd_plan() {
  load "$1"
  mkdir -p "$ndir"
  rm -f "$ndir/unavailable"
  planned && return 0
  local reason
  if [ "${MODEL_FLEET_REAL_NODE:-auto}" = 0 ]; then
    reason="MODEL_FLEET_REAL_NODE=0"
  else
    reason=$(why_not)
  fi
  if [ -n "$reason" ]; then
    echo "$reason" >"$ndir/unavailable"
    log "real node: not started on this machine: $reason (the simulated nodes work as before)"
    return 0
  fi
  reason=$(missing_parts)
  [ -z "$reason" ] || die "real node: $reason. This machine can run a real node; MODEL_FLEET_REAL_NODE=0 starts the instance without one"
  mkdir -p "$SLOTS_DIR"
  exec 7>"$SLOTS_DIR/.lock"
  flock 7
  local n owner
  for n in $(seq 1 $MAX_SLOT); do
    if [ -f "$SLOTS_DIR/$n" ]; then
      owner=$(cat "$SLOTS_DIR/$n")
      # A slot whose instance folder no longer names it is left over (folder deleted, machine
      # state lost): clean it up and take it.
      if grep -qx "NODE_SLOT=$n" "$owner/node/node.env" 2>/dev/null; then continue; fi
      log "real node: slot $n was left by $owner: cleaning it up"
    fi
    # Whatever a crashed run left in this slot (a network namespace, a cgroup, data) goes first.
    teardown_slot "$n"
    echo "$dir" >"$SLOTS_DIR/$n"
    slot_env "$n" >"$ndir/node.env.tmp"
    mv "$ndir/node.env.tmp" "$ndir/node.env"
    exec 7>&-
    return 0
  done
  die "all $MAX_SLOT real-node slots are taken (see $SLOTS_DIR): stop instances you no longer need"
}

# ---------- processes ----------
pid_of() { cat "$ndir/pids/$1.pid" 2>/dev/null || true; }
# alive NAME: the recorded pid runs and its command line names this node (guards against pid reuse).
alive() { pid_runs "$(pid_of "$1")" "$dir/|$NODE_RUN/|$NODE_DATA/"; }
log_tail() { echo "--- last lines of $ndir/logs/$1.log ---" >&2; tail -n 25 "$ndir/logs/$1.log" >&2 2>/dev/null || true; }

# cgroup_dirs: this node's cgroup folders, one per hierarchy (v1) or the one (v2).
cgroup_dirs() {
  local r
  for r in $(cgroup_roots); do echo "$r/$NODE_CGROUP"; done
}

# start NAME WHERE BINARY ARGS...: run detached, in the node's cgroup (so its children, e.g.
# containerd's shims, are found at stop), in the node's network and mount namespaces when WHERE is
# `node`. The shell moves itself into the cgroup, then execs: the recorded pid is the binary's.
start() {
  local name=$1 where=$2 bin=$3; shift 3
  [ -x "$bin" ] || die "$bin is missing: run 'make bootstrap'"
  local procs="" d
  for d in $(cgroup_dirs); do procs="$procs $d/node/cgroup.procs"; done
  local enter=()
  [ "$where" = node ] && enter=(nsenter "--net=/run/netns/$NODE_NETNS" "--mount=$NODE_RUN/mnt" --)
  # shellcheck disable=SC2016
  # The daemons run with umask 022, as under systemd on a real node: containerd creates each image snapshot's root
  # with it, and a 0700 root would keep a non-root container without CAP_DAC_OVERRIDE from its own entrypoint.
  setsid bash -c 'umask 022; for f in '"$procs"'; do echo $$ >"$f"; done; exec "$@"' _ "${enter[@]}" "$bin" "$@" \
    >"$ndir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$ndir/pids/$name.pid"
  local i
  for i in $(seq 100); do
    alive "$name" && return 0
    [ -r "/proc/$!/cmdline" ] || break
    sleep 0.1
  done
  alive "$name" || { log_tail "$name"; die "$name of the real node exited at start (log: $ndir/logs/$name.log)"; }
}

wait_until() { # NAME SECONDS CHECK...
  local name=$1 timeout=$2; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    alive "$name" || { log_tail "$name"; die "$name of the real node exited during start-up (log: $ndir/logs/$name.log)"; }
    [ $SECONDS -lt $deadline ] || { log_tail "$name"; die "$name of the real node did not become ready within ${timeout}s (log: $ndir/logs/$name.log)"; }
    sleep 0.2
  done
}

# cap_sys_resource: yes when this shell may lower OOM scores (CAP_SYS_RESOURCE, bit 24).
cap_sys_resource() {
  local eff; eff=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
  if (( (0x$eff >> 24) & 1 )); then echo yes; else echo no; fi
}

in_node() { nsenter "--net=/run/netns/$NODE_NETNS" "$@"; }
kc() { "$(kubernetes_bin_dir)/kubectl" --kubeconfig "$dir/kubeconfig" "$@"; }

# ---------- set-up ----------
sign() { # NAME CN ORG EXT: a key and certificate signed by the instance CA, under pki/
  local name=$1 cn=$2 org=$3 ext=$4 subj="/CN=$2"
  [ -n "$org" ] && subj="$subj/O=$org"
  openssl req -new -newkey rsa:2048 -nodes -keyout "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" 2>/dev/null
  printf '%s\n' "$ext" >"$pki/$name.ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 30 \
    -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}

kubeconfig_for() { # FILE CERT: a kubeconfig reaching the API server from inside the node
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $instance
  cluster:
    server: https://$NODE_APISERVER_IP:$APISERVER_PORT
    certificate-authority: $pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $pki/$2.crt
    client-key: $pki/$2.key
contexts:
- name: $instance
  context: {cluster: $instance, user: $2}
current-context: $instance
EOF
}

setup_network() {
  ip netns add "$NODE_NETNS"
  ip link add "$NODE_HOST_IF" type veth peer name "${NODE_HOST_IF}p" netns "$NODE_NETNS"
  ip addr add "$NODE_HOST_IP/30" dev "$NODE_HOST_IF"
  ip link set "$NODE_HOST_IF" up
  # Safety nets in the host's table: should the veth go while something on the host still dials the
  # node or a pod, the packet is refused here instead of following the default route out.
  ip route add unreachable "${NODE_HOST_IP%.1}.0/30" metric 4000
  ip route add unreachable "$NODE_POD_CIDR" metric 4000
  # The API server's pod and service proxies reach pods through the node.
  ip route add "$NODE_POD_CIDR" via "$NODE_IP" dev "$NODE_HOST_IF"
  ip -n "$NODE_NETNS" link set "${NODE_HOST_IF}p" name eth0
  ip -n "$NODE_NETNS" addr add "$NODE_IP/30" dev eth0
  ip -n "$NODE_NETNS" link set eth0 up
  ip -n "$NODE_NETNS" link set lo up
  # The pod bridge exists before the first pod: the API server forwarder listens on its address.
  ip -n "$NODE_NETNS" link add cni0 type bridge
  ip -n "$NODE_NETNS" addr add "$NODE_APISERVER_IP/24" dev cni0
  ip -n "$NODE_NETNS" link set cni0 up
  # A connection from the node itself to a Service address needs a route before kube-proxy's NAT
  # rewrites it; the bridge keeps a Service address without endpoints inside the node.
  ip -n "$NODE_NETNS" route add "$SERVICE_CIDR" dev cni0
  # Per network namespace (Linux >= 5.3): forwarding between pods and Service NAT on the bridge.
  in_node sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1
}

setup_cgroups() {
  local d r
  for r in $(cgroup_roots); do
    d="$r/$NODE_CGROUP"
    mkdir -p "$d/node"
    if [ -f "$r/cpuset.cpus" ] && [ "$(stat -fc %T "$r")" != cgroup2fs ]; then
      # cgroup v1 cpuset: a child holds no task until its cpus and mems are set.
      cat "$r/cpuset.cpus" >"$d/cpuset.cpus"; cat "$r/cpuset.mems" >"$d/cpuset.mems"
      cat "$d/cpuset.cpus" >"$d/node/cpuset.cpus"; cat "$d/cpuset.mems" >"$d/node/cpuset.mems"
    fi
    if [ "$(stat -fc %T "$r")" = cgroup2fs ] && [ "$(cgroup_mode)" = v2 ]; then
      # v2: hand the controllers the kubelet needs to our subtree (processes stay in the leaf `node`).
      local c wanted=""
      for c in cpu cpuset memory pids io hugetlb; do
        grep -qw "$c" "$r/cgroup.subtree_control" && wanted="$wanted +$c"
      done
      [ -z "$wanted" ] || echo "$wanted" >"$d/cgroup.subtree_control"
    fi
  done
}

# setup_mounts: the node's private mount namespace (a slave of the host's: host mounts show up in
# it, its own never leave it), pinned at $NODE_RUN/mnt.
setup_mounts() {
  mkdir -p "$NODE_DATA/var-log" "$NODE_RUN/sysctl"
  touch "$NODE_RUN/mnt"
  unshare "--mount=$NODE_RUN/mnt" --propagation slave true
  # kubelet wants these host-wide sysctls and would set them (protectKernelDefaults: false) or
  # refuse to start (true): it reads our files instead, the host keeps its values.
  local spec
  mkdir -p "$NODE_RUN/sysctl/vm" "$NODE_RUN/sysctl/kernel"
  for spec in vm/overcommit_memory=1 kernel/panic=10 kernel/panic_on_oops=1; do
    echo "${spec#*=}" >"$NODE_RUN/sysctl/${spec%%=*}"
  done
  nsenter "--mount=$NODE_RUN/mnt" -- bash -euc '
    for f in vm/overcommit_memory kernel/panic kernel/panic_on_oops; do
      mount --bind "$1/sysctl/$f" "/proc/sys/$f"
    done
    # Pod and container logs (/var/log/pods, /var/log/containers) stay with the node.
    mount --bind "$2/var-log" /var/log' _ "$NODE_RUN" "$NODE_DATA"
}

write_configs() {
  local cbin; cbin=$(containerd_bin_dir)
  mkdir -p "$ndir/cni/net.d" "$ndir/certs.d/modelfleet.local" "$NODE_DATA/cni" "$NODE_DATA/registry" "$NODE_RUN/containerd"
  cat >"$ndir/containerd.toml" <<EOF
# containerd of the real node of instance '$instance' (written by node.sh).
version = 3
root = "$NODE_DATA/containerd"
state = "$NODE_RUN/containerd"
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "$NODE_RUN/containerd.sock"
[ttrpc]
  address = ""
[debug]
  address = "$NODE_RUN/containerd-debug.sock"

[plugins.'io.containerd.internal.v1.opt']
  path = "$NODE_DATA/opt"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "modelfleet.local/pause:3.10"
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = "$ndir/certs.d"
[plugins.'io.containerd.cri.v1.runtime']
  netns_mounts_under_state_dir = true
  # Without CAP_SYS_RESOURCE (e.g. this VM's sandbox) nothing may lower its OOM score: keep the
  # pods' scores at or above containerd's own instead of failing to start them.
  restrict_oom_score_adj = $( [ "$(cap_sys_resource)" = yes ] && echo false || echo true )
  cdi_spec_dirs = []
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$NODE_RUN/runc"
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["$(cni_plugins_bin_dir)"]
    conf_dir = "$ndir/cni/net.d"
[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
EOF
  # Images named modelfleet.local/* come from the node's own registry.
  cat >"$ndir/certs.d/modelfleet.local/hosts.toml" <<EOF
server = "http://$NODE_REGISTRY"
[host."http://$NODE_REGISTRY"]
  capabilities = ["pull", "resolve"]
EOF
  cat >"$ndir/cni/net.d/10-modelfleet.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "modelfleet",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local", "dataDir": "$NODE_DATA/cni",
        "ranges": [[{"subnet": "$NODE_POD_CIDR", "gateway": "$NODE_APISERVER_IP"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "backend": "nftables", "capabilities": {"portMappings": true}}
  ]
}
EOF
  # No nameserver: there is no DNS inside the node (CoreDNS is not deployed), and the host's
  # resolver address must not be handed to pods.
  echo "# real node of instance '$instance': no DNS server (CoreDNS is not deployed)" >"$ndir/resolv.conf"
  cat >"$ndir/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $pki/kubelet.crt
tlsPrivateKeyFile: $pki/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://$NODE_RUN/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /$NODE_CGROUP
failCgroupV1: false
failSwapOn: false
protectKernelDefaults: false
oomScoreAdj: $( [ "$(cap_sys_resource)" = yes ] && echo -999 || echo 0 )
resolvConf: $ndir/resolv.conf
clusterDomain: cluster.local
registerWithTaints:
- {key: $NODE_LABEL, value: "true", effect: NoSchedule}
maxPods: 32
serializeImagePulls: false
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
shutdownGracePeriod: 0s
EOF
  cat >"$ndir/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
hostnameOverride: $NODE_NAME
clientConnection: {kubeconfig: $ndir/kube-proxy.kubeconfig}
clusterCIDR: $NODE_POD_CIDR
detectLocalMode: ClusterCIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["$NODE_IP/32"]
# Leave the host-wide conntrack settings alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

push_images() {
  local images entry image binary
  images=$(images_dir)
  for entry in "${NODE_IMAGES[@]}"; do
    read -r image binary <<<"$entry"
    "$REPO_ROOT/images/image.sh" load "$instance" "$images/${image%%:*}.tar" "modelfleet.local/$image"
  done
}

node_ready() {
  [ "$(kc get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

start_kubelet() {
  start kubelet node "$(kubernetes_node_bin_dir)/kubelet" --config="$ndir/kubelet.yaml" \
    --kubeconfig="$ndir/kubelet.kubeconfig" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" \
    --node-labels="$NODE_LABEL=true" --root-dir="$NODE_DATA/kubelet" --cert-dir="$NODE_DATA/kubelet-pki" --v=1
}

cmd_start() {
  load "$1"
  planned || die "instance '$instance' has no planned real node: run node.sh plan $instance first"
  source "$dir/ports.env"
  local t0=$SECONDS
  umask 077
  # containerd finds its shim (containerd-shim-runc-v2) on PATH.
  PATH="$(containerd_bin_dir):$PATH"
  mkdir -p "$ndir/pids" "$ndir/logs" "$NODE_RUN" "$NODE_DATA"
  chmod 755 "$NODE_RUN" "$NODE_DATA"
  # The node's identities, signed by the instance CA: the kubelet as system:node:real-1 (the Node
  # authorizer and NodeRestriction limit it to its own node and pods), kube-proxy as
  # system:kube-proxy (bound to system:node-proxier by default RBAC), the kubelet's serving
  # certificate the API server verifies.
  local client_ext="keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
  sign node-kubelet "system:node:$NODE_NAME" system:nodes "$client_ext"
  sign node-kube-proxy system:kube-proxy "" "$client_ext"
  sign kubelet "$NODE_NAME" "" "keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:$NODE_IP,DNS:$NODE_NAME"
  kubeconfig_for "$ndir/kubelet.kubeconfig" node-kubelet
  kubeconfig_for "$ndir/kube-proxy.kubeconfig" node-kube-proxy
  write_configs

  log "real node: network namespace $NODE_NETNS (node $NODE_IP, pods $NODE_POD_CIDR), cgroup /$NODE_CGROUP"
  setup_network
  setup_cgroups
  setup_mounts
  # The API server for the node: host loopback <- unix socket <- the node's bridge address.
  start apiserver-forward host "$(command -v socat)" \
    "UNIX-LISTEN:$NODE_RUN/apiserver.sock,fork,mode=600" "TCP:127.0.0.1:$APISERVER_PORT"
  start apiserver-listen node "$(command -v socat)" \
    "TCP-LISTEN:$APISERVER_PORT,bind=$NODE_APISERVER_IP,fork,reuseaddr" "UNIX-CONNECT:$NODE_RUN/apiserver.sock"
  start registry node "$(crane_bin_dir)/crane" registry serve --address "$NODE_REGISTRY" --disk "$NODE_DATA/registry"
  start containerd node "$(containerd_bin_dir)/containerd" --config "$ndir/containerd.toml"
  wait_until registry 20 in_node curl -sf --max-time 2 "http://$NODE_REGISTRY/v2/"
  wait_until containerd 30 in_node "$(containerd_bin_dir)/ctr" --address "$NODE_RUN/containerd.sock" version
  push_images
  start_kubelet
  start kube-proxy node "$(kubernetes_node_bin_dir)/kube-proxy" --config="$ndir/kube-proxy.yaml" --v=1
  wait_until kubelet 90 node_ready
  alive kube-proxy || { log_tail kube-proxy; die "kube-proxy of the real node exited (log: $ndir/logs/kube-proxy.log)"; }
  log "real node: $NODE_NAME Ready in $((SECONDS - t0))s"
}

cmd_kubelet() {
  load "$1"
  planned || die "instance '$instance' has no real node"
  source "$dir/ports.env"
  if alive kubelet; then log "real node: kubelet already runs (pid $(pid_of kubelet))"; return; fi
  start_kubelet
  wait_until kubelet 60 in_node curl -sf --max-time 2 http://127.0.0.1:10248/healthz
  wait_until kubelet 90 node_ready
  log "real node: kubelet started again (pid $(pid_of kubelet)), $NODE_NAME Ready"
}

# ---------- tear-down ----------
# stop_pid NAME: SIGTERM, then SIGKILL after 5 s.
stop_pid() {
  alive "$1" || return 0
  local pid; pid=$(pid_of "$1")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do alive "$1" || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

# teardown_slot SLOT: removes everything a node in SLOT may have left, knowing only the slot:
# the processes in its cgroup (containers, shims, anything not stopped by pid), its mount and
# network namespaces, host routes and veth, cgroups, data and the slot itself.
teardown_slot() {
  local n=$1
  eval "$(slot_env "$n")"
  local d pids="" tries
  # Freeze (v1 freezer) so nothing forks while we kill, then kill every task, then thaw.
  local freezer="/sys/fs/cgroup/freezer/$NODE_CGROUP"
  [ -f "$freezer/freezer.state" ] && echo FROZEN >"$freezer/freezer.state" 2>/dev/null || true
  for d in $(cgroup_dirs); do
    [ -d "$d" ] || continue
    [ -f "$d/cgroup.kill" ] && echo 1 >"$d/cgroup.kill" 2>/dev/null || true
    pids="$pids $(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | tr '\n' ' ')"
  done
  for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
  [ -f "$freezer/freezer.state" ] && echo THAWED >"$freezer/freezer.state" 2>/dev/null || true
  for tries in $(seq 50); do
    local left=0
    for d in $(cgroup_dirs); do
      [ -d "$d" ] && [ -n "$(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null)" ] && left=1
    done
    [ $left = 0 ] && break
    sleep 0.1
  done
  if [ -e "$NODE_RUN/mnt" ]; then umount -l "$NODE_RUN/mnt" 2>/dev/null || true; fi
  ip netns del "$NODE_NETNS" 2>/dev/null || true
  ip link del "$NODE_HOST_IF" 2>/dev/null || true
  ip route del unreachable "${NODE_HOST_IP%.1}.0/30" metric 4000 2>/dev/null || true
  ip route del unreachable "$NODE_POD_CIDR" metric 4000 2>/dev/null || true
  ip route del "$NODE_POD_CIDR" via "$NODE_IP" 2>/dev/null || true
  for d in $(cgroup_dirs); do
    [ -d "$d" ] || continue
    for tries in $(seq 20); do
      find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
      [ -d "$d" ] || break
      sleep 0.1
    done
    [ -d "$d" ] && log "real node: could not remove cgroup $d (tasks left: $(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | tr '\n' ' '))"
  done
  # Nothing of the node is mounted on the host (its mounts lived in its own namespace); refuse to
  # delete through a mount all the same.
  local d2
  for d2 in "$NODE_DATA" "$NODE_RUN"; do
    [ -d "$d2" ] || continue
    if findmnt -rno TARGET | grep -q "^$d2/"; then
      log "real node: mounts left under $d2 (not removed): $(findmnt -rno TARGET | grep "^$d2/" | head -3 | tr '\n' ' ')"
    else
      rm -rf --one-file-system "$d2"
    fi
  done
  rm -f "$SLOTS_DIR/$n"
}

cmd_stop() {
  load "$1"
  planned || return 0
  local c
  for c in kube-proxy kubelet containerd registry apiserver-listen apiserver-forward; do stop_pid "$c"; done
  mkdir -p "$SLOTS_DIR"
  exec 7>"$SLOTS_DIR/.lock"
  flock 7
  # Only our own slot: another instance may have taken it after a crash cleaned it up.
  if [ "$(cat "$SLOTS_DIR/$NODE_SLOT" 2>/dev/null)" = "$dir" ] || [ ! -f "$SLOTS_DIR/$NODE_SLOT" ]; then
    teardown_slot "$NODE_SLOT"
  fi
  exec 7>&-
  rm -f "$ndir/node.env"
}

cmd_status() {
  load "$1"
  if [ -f "$ndir/unavailable" ]; then echo "real node: not started: $(cat "$ndir/unavailable")"; return 0; fi
  planned || { echo "real node: none"; return 0; }
  local rc=0 c
  for c in apiserver-forward apiserver-listen registry containerd kubelet kube-proxy; do
    if alive "$c"; then echo "real node $c: running (pid $(pid_of "$c"))"; else echo "real node $c: NOT running (log: $ndir/logs/$c.log)"; rc=1; fi
  done
  echo "real node: $NODE_NAME in network namespace $NODE_NETNS, node IP $NODE_IP, pods $NODE_POD_CIDR, cgroup /$NODE_CGROUP"
  echo "real node: reach a Service: ip netns exec $NODE_NETNS curl http://<ClusterIP>:<port>/"
  return $rc
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
  check) reason=$(why_not); [ -n "$reason" ] || reason=$(missing_parts)
         if [ -n "$reason" ]; then echo "$reason"; exit 1; fi ;;
  plan) [ $# -eq 1 ] || usage; cmd_plan "$1" ;;
  start) [ $# -eq 1 ] || usage; cmd_start "$1" ;;
  kubelet) [ $# -eq 1 ] || usage; cmd_kubelet "$1" ;;
  stop) [ $# -eq 1 ] || usage; cmd_stop "$1" ;;
  status) [ $# -eq 1 ] || usage; cmd_status "$1" ;;
  *) usage ;;
esac
