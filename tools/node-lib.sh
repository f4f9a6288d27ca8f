# shellcheck shell=bash
# Running a node of the local cluster of tools/cluster-up.sh on a containerd
# of tools/containerd-up.sh: podlife or, as the reference, a kubelet built
# from k8s.io/kubernetes (tools/cluster-build.sh). Used by
# tools/conformance.sh and tools/busy-node.sh. Sourced after the cluster's
# exports (PODLIFE_CLUSTER_DIR, PODLIFE_CLUSTER_BIN, PODLIFE_NODE_NAME,
# PODLIFE_NODE_KUBECONFIG, KUBECONFIG) are set; the caller defines log and
# die. start_node sets node_pid.
#
# Two optional settings, for the node e2e suite (tools/conformance.sh --suite
# node), which assumes a node set up as its own kubelet
# (k8s.io/kubernetes test/e2e_node/services/kubelet.go):
#   NODE_STATIC_PODS  a static pod directory (staticPodPath, the kubelet's
#                     --pod-manifest-path), read every 10 s as that kubelet's
#   NODE_LOCAL_PORTS  true: the read-only port 10255 (on every address, as the
#                     kubelet's) and healthz on 127.0.0.1:10248, the ports
#                     the suite dials on localhost;
#                     otherwise both are off (10248 and 10255 may be another
#                     node's on this machine)
# and one for several nodes on one machine (tools/lost-and-found.sh):
#   NODE_POD_LOGS_DIR the node's pod log root (podlife's --pod-logs-dir, the
#                     kubelet's podLogsDir) instead of /var/log/pods, which
#                     another node on this machine may hold: a node removes
#                     the log directories of pods it does not know there

# free_port: a TCP port no socket uses now, below the kernel's ephemeral
# range (32768 and up by default), where outgoing connections take their
# local ports: a listener cannot bind a port one of them holds, and with
# several nodes and control planes on this machine one soon would.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 12000))
    if ! (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null &&
      { ! command -v ss >/dev/null || [[ -z "$(ss -Htan "sport = :$p" 2>/dev/null)" ]]; }; then
      echo "$p"
      return
    fi
  done
}

# kubelet_config CA ENDPOINT IP: the kubelet's configuration: the API on a
# free port of IP, the node's address (--node-ip; the kubelet refuses a
# loopback one): the API server reaches it there for logs and exec. As a
# real kubelet's, it is authenticated by client
# certificates of the cluster CA and by token review, authorized by
# SubjectAccessReview; no read-only port, no healthz port; images never
# garbage-collected (they cannot be pulled again here); the cluster domain
# cluster.local, as kubeadm configures it and podlife has it by default (the
# kubelet's own default is none); cgroupfs and no QoS
# cgroups (cgroup v1 here; --fail-cgroupv1=false and the flags of
# start_node). Everything else, API QPS and burst among it, is the kubelet's
# default.
kubelet_config() {
  local address="$3" readonly_port=0 healthz_port=0
  if [[ "${NODE_LOCAL_PORTS:-}" == true ]]; then
    # The read-only port listens on address, and the suite dials localhost.
    address=0.0.0.0 readonly_port=10255 healthz_port=10248
  fi
  cat <<EOF2
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $address
port: $(free_port)
readOnlyPort: $readonly_port
healthzPort: $healthz_port
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $1
authorization:
  mode: Webhook
containerRuntimeEndpoint: $2
failSwapOn: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
serializeImagePulls: false
clusterDomain: cluster.local
EOF2
  [[ -z "${NODE_POD_LOGS_DIR:-}" ]] || printf 'podLogsDir: %s\n' "$NODE_POD_LOGS_DIR"
  if [[ -n "${NODE_STATIC_PODS:-}" ]]; then
    printf 'staticPodPath: %s\nfileCheckFrequency: 10s\n' "$NODE_STATIC_PODS"
  fi
}

# host_ipv4: the address of the default route's interface, as the kubelet
# picks its node IP.
host_ipv4() {
  ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p'
}

# start_node KIND BINARY ENDPOINT ROOT LOG: starts podlife or a kubelet
# (KIND) from BINARY as node $PODLIFE_NODE_NAME on the CRI ENDPOINT, with
# root directory ROOT (made 0700; the kubelet's configuration and
# certificates go there too) and its output in LOG; sets node_pid.
start_node() {
  local kind="$1" bin="$2" endpoint="$3" root="$4" out="$5" node_ip extra=()
  mkdir -p "$root"
  chmod 0700 "$root"
  case "$kind" in
    podlife)
      [[ -z "${NODE_STATIC_PODS:-}" ]] || extra+=(--pod-manifest-path "$NODE_STATIC_PODS" --file-check-frequency 10s)
      [[ "${NODE_LOCAL_PORTS:-}" != true ]] || extra+=(--read-only-port 10255 --healthz-port 10248)
      [[ -z "${NODE_POD_LOGS_DIR:-}" ]] || extra+=(--pod-logs-dir "$NODE_POD_LOGS_DIR")
      # The kubelet API on a free port, trusting the cluster CA: the API
      # server reaches it for logs, exec, attach and port-forward with its
      # kubelet client certificate, and asks SubjectAccessReviews for other
      # callers. No read-only endpoint (off by default), as the kubelet's
      # readOnlyPort 0. No healthz port: the kubelet's 10248 may be another
      # node's on this machine.
      "$bin" run --kubeconfig "$PODLIFE_NODE_KUBECONFIG" --node-name "$PODLIFE_NODE_NAME" \
        --runtime-endpoint "$endpoint" --root-dir "$root" --healthz-port 0 \
        --port "$(free_port)" --client-ca-file "$PODLIFE_CLUSTER_DIR/pki/ca.crt" \
        "${extra[@]}" </dev/null >"$out" 2>&1 &
      node_pid=$!
      ;;
    kubelet)
      node_ip="$(host_ipv4)"
      [[ -n "$node_ip" ]] || die "cannot find this host's IPv4 address (ip -4 route get 1.1.1.1) for the kubelet"
      kubelet_config "$PODLIFE_CLUSTER_DIR/pki/ca.crt" "$endpoint" "$node_ip" >"$root/kubelet.yaml"
      "$bin" --config "$root/kubelet.yaml" --kubeconfig "$PODLIFE_NODE_KUBECONFIG" \
        --hostname-override "$PODLIFE_NODE_NAME" --node-ip "$node_ip" --root-dir "$root" --cert-dir "$root/pki" \
        --fail-cgroupv1=false --cgroup-driver=cgroupfs --cgroups-per-qos=false --enforce-node-allocatable= \
        </dev/null >"$out" 2>&1 &
      node_pid=$!
      ;;
    *) die "start_node: no node kind $kind" ;;
  esac
}

# wait_node_ready KIND LOG SECONDS: waits until node $PODLIFE_NODE_NAME
# reports Ready; dies if process $node_pid exits or SECONDS pass.
wait_node_ready() {
  local deadline=$((SECONDS + $3))
  until "$PODLIFE_CLUSTER_BIN/kubectl" --kubeconfig "$KUBECONFIG" get node "$PODLIFE_NODE_NAME" \
    -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -qx True; do
    kill -0 "$node_pid" 2>/dev/null || die "the $1 exited: $(tail -n 20 "$2")"
    [[ $SECONDS -lt $deadline ]] || die "node $PODLIFE_NODE_NAME not Ready after $3s: $(tail -n 20 "$2")"
    sleep 1
  done
}

# stop_node KIND: TERM process $node_pid, KILL it after 10 s, and reap it.
stop_node() {
  [[ -n "${node_pid:-}" ]] || return 0
  if kill -0 "$node_pid" 2>/dev/null; then
    log "stopping the $1 (pid $node_pid)"
    kill -TERM "$node_pid"
    for _ in $(seq 50); do kill -0 "$node_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$node_pid" 2>/dev/null || true
  fi
  wait "$node_pid" 2>/dev/null || true
  node_pid=""
}

# umount_under ROOT: unmounts everything mounted at or under ROOT, deepest
# first (the kubelet bind-mounts its root onto itself and mounts the pods'
# volumes under it).
umount_under() {
  awk -v root="$1" '$2 == root || index($2, root "/") == 1 { print $2 }' /proc/self/mounts |
    sort -r | xargs -r -n1 umount -l 2>/dev/null || true
}
