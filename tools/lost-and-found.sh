#!/usr/bin/env bash
# Nodes lost and found: one control plane (tools/cluster-up.sh), two
# podlife nodes and a kubelet node (tools/node-lib.sh) on this machine, a
# Deployment spread over them, and one node lost in turn:
#
#   sudo tools/lost-and-found.sh [--lost podlife,kubelet] [--cases kill,partition,short]
#                                [--away SECONDS] [--report DIR] [--ci]
#
# Each node has its own containerd (tools/containerd-up.sh: a node kills
# the runtime pods it does not know, so nodes cannot share one), root
# directory, pod log directory, kubelet API port, client certificate
# (system:node:<name>, minted here with the cluster CA) and a TCP proxy
# between it and the API server (tools/lostproxy) that can drop its
# traffic. The control plane marks a silent node Unknown after
# --grace (the controller manager's --node-monitor-grace-period, default
# 30s here, 50s in a real cluster) and evicts its pods --toleration seconds
# later (the default not-ready/unreachable tolerationSeconds, 10 here, 300
# in a real cluster).
#
# Each case makes a Deployment of two pods a node, spread by topology
# (maxSkew 1 over kubernetes.io/hostname, tainted nodes left out, so the
# evicted pods can be placed on the others), and one pod bound to the lost
# node that tolerates unreachable for ever (the "stayer": a DaemonSet pod
# is such a pod). Then:
#   kill       the lost node's agent gets SIGKILL (its containers keep
#              running) and is started again once its pods were evicted
#              and rescheduled;
#   partition  the lost node's proxy drops its traffic until its pods were
#              evicted and rescheduled, then passes it again;
#   short      the proxy drops the traffic for --short seconds (default 8,
#              well under the grace period with the 10 s lease renewal and
#              the 5 s node monitor period), then passes it again.
# What is checked: kill and partition: the node goes Ready=Unknown, its
# Deployment pods are deleted (evicted) and replaced on the other nodes, while
# the node's containers keep running and the stayer is marked not Ready;
# then, still away, one evicted pod is
# force-deleted (it leaves the API at once, as an admin recovering a
# StatefulSet does it) and a new pod is bound to the node (the "late" one:
# a DaemonSet's new pod). Once back, the node reports Ready, stops the
# evicted pods' containers (the force-deleted one's too) and removes the
# other from the API, starts the late pod, and the stayer runs on
# undisturbed (same container ID, no restart, Ready again, its log readable
# through the node's kubelet API), the other nodes' pods too. short: the
# node never leaves Ready and every pod runs on undisturbed. Times are
# seconds from the disruption.
#
# --away keeps a killed or cut-off node away at least SECONDS (default 0:
# back once its pods were replaced; longer than 45 s, its API clients' HTTP/2
# health checks give up on their connections and dial again while cut off).
# --lost names the kinds of node lost in turn (default podlife,kubelet);
# --ci is the CI-sized run: two podlife nodes only (no kubelet), one lost,
# cases kill and short. stdout: one table row per case (node, case,
# outcome, times). The nodes', proxies' and control plane's logs are in
# the report directory.
#
# Needs root, containerd and ctr, jq, go, and the control plane's binaries
# with a kubelet (tools/cluster-build.sh); without them it prints a line
# starting "SKIPPED:" and exits 0. Exits 1 if any case failed.
set -euo pipefail

tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$tools")"
TOOL=lost-and-found
log() { echo "$TOOL: $(date -u +%H:%M:%S) $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}
skip() {
  echo "SKIPPED: $TOOL: $*"
  exit 0
}
usage() {
  log "usage: lost-and-found.sh [--lost podlife,kubelet] [--cases kill,partition,short] [--away SECONDS] [--report DIR] [--ci]"
  exit 2
}
# shellcheck source=tools/node-lib.sh
source "$tools/node-lib.sh"

lost=podlife,kubelet cases=kill,partition,short report="" ci=false away=0
grace=30 toleration=10 short=8
while [[ $# -gt 0 ]]; do
  case "$1" in
    --lost | --cases | --report | --away)
      [[ $# -ge 2 && -n "$2" ]] || { log "$1 needs a value"; usage; }
      case "$1" in
        --lost) lost="$2" ;;
        --cases) cases="$2" ;;
        --report) report="$2" ;;
        --away) away="$2" ;;
      esac
      shift 2
      ;;
    --ci) ci=true lost=podlife cases=kill,short; shift ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *) log "unknown argument $1"; usage ;;
  esac
done
[[ "$away" =~ ^[0-9]+$ ]] || { log "--away must be a number of seconds, not $away"; usage; }
IFS=, read -r -a lost_list <<<"$lost"
IFS=, read -r -a case_list <<<"$cases"
for k in "${lost_list[@]}"; do
  [[ "$k" == podlife || ( "$k" == kubelet && $ci == false ) ]] || { log "--lost names podlife and kubelet (podlife only with --ci), not $k"; usage; }
done
for c in "${case_list[@]}"; do
  [[ "$c" =~ ^(kill|partition|short)$ ]] || { log "--cases names kill, partition and short, not $c"; usage; }
done

[[ $(id -u) -eq 0 ]] || skip "needs root (containerd and the nodes); try: sudo $0 $*"
for cmd in containerd ctr jq go openssl; do
  command -v "$cmd" >/dev/null || skip "no $cmd on PATH"
done
if ! cbin="$("$tools/cluster-build.sh" 2>/dev/null | tail -n 1)" || [[ ! -x "$cbin/kubelet" ]]; then
  skip "no control plane binaries with a kubelet (tools/cluster-build.sh failed or built none)"
fi

if [[ -z "$report" ]]; then
  report="$(mktemp -d "${TMPDIR:-/tmp}/podlife-lost-and-found.XXXXXX")"
fi
mkdir -p "$report"
report="$(cd "$report" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/podlife-lost-and-found-run.XXXXXX")"
chmod 0700 "$work"
cluster_dir="$work/cluster"

# The nodes: name → kind. lf-a is the podlife node lost, lf-k the kubelet
# node lost; lf-b is always there.
declare -A kind=([lf-a]=podlife [lf-b]=podlife)
[[ $ci == true ]] || kind[lf-k]=kubelet
declare -A pid=() proxy_pid=() endpoint=() logf=()
names=("${!kind[@]}")
mapfile -t names < <(printf '%s\n' "${names[@]}" | sort)

cleanup() {
  local rc=$? n
  set +e
  for n in "${names[@]}"; do
    node_pid="${pid[$n]:-}"
    stop_node "${kind[$n]}" 2>/dev/null
    [[ -z "${proxy_pid[$n]:-}" ]] || { kill "${proxy_pid[$n]}" 2>/dev/null; wait "${proxy_pid[$n]}" 2>/dev/null; }
    [[ ! -d "$work/ctrd-$n" ]] || "$tools/containerd-down.sh" "$work/ctrd-$n" >>"$report/teardown.log" 2>&1
    umount_under "$work/root-$n"
  done
  [[ ! -d "$cluster_dir" ]] || {
    cp "$cluster_dir"/*.log "$report/" 2>/dev/null
    "$tools/cluster-down.sh" "$cluster_dir" >>"$report/teardown.log" 2>&1
  }
  umount_under "$work"
  rm -rf "$work"
  log "stopped everything it started; report in $report"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "report directory: $report"
log "building podlife and lostproxy"
(cd "$repo" && go build -o "$work/podlife" ./cmd/podlife && go build -o "$work/lostproxy" ./tools/lostproxy)
podlife_rev="$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD || echo '+dirty')"

log "starting the control plane (node monitor grace period ${grace}s, toleration ${toleration}s)"
env_out="$(PODLIFE_CLUSTER_NODE_MONITOR_GRACE_PERIOD="${grace}s" PODLIFE_CLUSTER_TOLERATION_SECONDS="$toleration" \
  PODLIFE_CLUSTER_DIR="$cluster_dir" "$tools/cluster-up.sh" 2>"$report/cluster-up.log")" ||
  die "cluster-up.sh failed: $(tail -n 5 "$report/cluster-up.log")"
eval "$(grep '^export ' <<<"$env_out")"
kubectl() { "$PODLIFE_CLUSTER_BIN/kubectl" --kubeconfig "$KUBECONFIG" "$@"; }
apiserver="$(sed -n 's/^APISERVER_PORT=//p' "$cluster_dir/podlife-cluster.env")"

# node_kubeconfig NAME SERVER: a kubeconfig of system:node:NAME (group
# system:nodes) for SERVER, its certificate signed by the cluster CA.
node_kubeconfig() {
  local n="$1" d="$work/pki-$1"
  (
    umask 077
    mkdir -p "$d"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/O=system:nodes/CN=system:node:$n" \
      -keyout "$d/node.key" -out "$d/node.csr" 2>/dev/null
    printf '%s\n' basicConstraints=CA:FALSE keyUsage=critical,digitalSignature extendedKeyUsage=clientAuth >"$d/ext"
    openssl x509 -req -in "$d/node.csr" -CA "$cluster_dir/pki/ca.crt" -CAkey "$cluster_dir/pki/ca.key" \
      -CAcreateserial -days 2 -extfile "$d/ext" -out "$d/node.crt" 2>/dev/null
    kubectl config set-cluster c --server "$2" --certificate-authority "$cluster_dir/pki/ca.crt" \
      --embed-certs --kubeconfig "$d/kubeconfig" >/dev/null
    kubectl config set-credentials "$n" --client-certificate "$d/node.crt" --client-key "$d/node.key" \
      --embed-certs --kubeconfig "$d/kubeconfig" >/dev/null
    kubectl config set-context c --cluster c --user "$n" --kubeconfig "$d/kubeconfig" >/dev/null
    kubectl config use-context c --kubeconfig "$d/kubeconfig" >/dev/null
  ) || die "cannot make node $n's client certificate"
  echo "$d/kubeconfig"
}

# start_agent NAME: starts node NAME's agent (podlife or the kubelet) on
# its containerd, its API traffic through its proxy; waits until Ready.
start_agent() {
  local n="$1" bin="$work/podlife"
  [[ "${kind[$n]}" == podlife ]] || bin="$PODLIFE_CLUSTER_BIN/kubelet"
  starts=$((starts + 1))
  logf[$n]="$report/$n.$starts.log"
  PODLIFE_NODE_NAME="$n" PODLIFE_NODE_KUBECONFIG="$work/pki-$n/kubeconfig" NODE_POD_LOGS_DIR="$work/root-$n/pod-logs" \
    start_node "${kind[$n]}" "$bin" "${endpoint[$n]}" "$work/root-$n" "${logf[$n]}"
  pid[$n]=$node_pid
  log "started node $n (${kind[$n]}, pid $node_pid, log ${logf[$n]})"
}
starts=0
wait_ready() {
  local n="$1"
  node_pid="${pid[$n]}" PODLIFE_NODE_NAME="$n" wait_node_ready "${kind[$n]}" "${logf[$n]}" 180
}

for n in "${names[@]}"; do
  log "node $n: containerd"
  endpoint[$n]="$(PODLIFE_CONTAINERD_DIR="$work/ctrd-$n" "$tools/containerd-up.sh" 2>"$report/containerd-up-$n.log" | tail -n 1)" ||
    die "containerd-up.sh failed for $n: $(tail -n 5 "$report/containerd-up-$n.log")"
  "$work/lostproxy" -target "127.0.0.1:$apiserver" -addr-file "$work/proxy-$n.addr" >"$report/proxy-$n.log" 2>&1 &
  proxy_pid[$n]=$!
  for _ in $(seq 100); do [[ -s "$work/proxy-$n.addr" ]] && break; sleep 0.1; done
  [[ -s "$work/proxy-$n.addr" ]] || die "lostproxy for $n did not start: $(cat "$report/proxy-$n.log")"
  node_kubeconfig "$n" "https://$(cat "$work/proxy-$n.addr")" >/dev/null
  start_agent "$n"
done
for n in "${names[@]}"; do
  PODLIFE_NODE_NAME=$n
  wait_ready "$n"
done
log "nodes Ready: ${names[*]}"
kubectl create namespace lf >/dev/null
for _ in $(seq 60); do kubectl -n lf get serviceaccount default >/dev/null 2>&1 && break; sleep 1; done

# --- the scenario --------------------------------------------------------------
replicas=$((2 * ${#names[@]}))

# pod_spec: a container that ends at SIGTERM, grace 1 s, on the host network
# (no CNI: three containerds on one machine would share its bridge).
pod_spec() {
  cat <<EOF
      hostNetwork: true
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: localhost/podlife/busybox:latest
        imagePullPolicy: Never
        command: [sh, -c, 'echo started; trap "exit 0" TERM; while :; do sleep 1; done']
EOF
}

# deploy NAME LOST: the Deployment NAME spread over the nodes and its
# stayer bound to node LOST.
deploy() {
  kubectl -n lf apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: $1
spec:
  replicas: $replicas
  selector:
    matchLabels: {app: $1}
  template:
    metadata:
      labels: {app: $1}
    spec:
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: DoNotSchedule
        nodeTaintsPolicy: Honor
        labelSelector:
          matchLabels: {app: $1}
$(pod_spec)
---
$(bound_pod "$1-stayer" "$2")
EOF
}

# bound_pod NAME NODE: a pod bound to NODE that tolerates its loss for ever,
# as a DaemonSet's pods do.
bound_pod() {
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
spec:
  nodeName: $2
  tolerations:
  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}
$(pod_spec | sed 's/^    //')
EOF
}
# pod_ready NAME: pod NAME is Ready, not deleted.
pod_ready() {
  pods | awk -v p="$1" '$1 == p && $4 == "live" && $7 == "True" { f = 1 } END { exit !f }'
}
# logs_ok NAME: kubectl logs of pod NAME (through its node's kubelet API)
# shows its first line.
logs_ok() {
  kubectl -n lf logs "$1" 2>/dev/null | grep -qx started
}

# pods: one line a pod of namespace lf: name uid node deleted containerID
# restarts ready.
pods() {
  kubectl -n lf get pods -o json | jq -r '.items[] | [.metadata.name, .metadata.uid, (.spec.nodeName // "-"),
    (if .metadata.deletionTimestamp then "deleted" else "live" end),
    ((.status.containerStatuses // [])[0].containerID // "-" | sub("^containerd://"; "")),
    ((.status.containerStatuses // [])[0].restartCount // 0 | tostring),
    ((.status.conditions // []) | map(select(.type == "Ready"))[0].status // "-")] | @tsv' | sort
}
# ready_status NAME: node NAME's Ready condition status.
ready_status() {
  kubectl get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null
}
# running_tasks NAME: IDs of the containers running in node NAME's containerd.
running_tasks() {
  ctr -a "${endpoint[$1]#unix://}" -n k8s.io tasks ls 2>/dev/null | awk 'NR > 1 && $3 == "RUNNING" { print $1 }' | sort
}
# until_true SECONDS COMMAND...: retries COMMAND every second; false after
# SECONDS.
until_true() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 1
  done
}
# spread_ok DEP: the Deployment's pods are two a node, all Ready, and the
# stayer Ready.
spread_ok() {
  local p
  p="$(pods)"
  [[ "$(awk -v d="$1-" 'index($1, d) == 1 && $1 != d "stayer" && $4 == "live" && $7 == "True" { print $3 }' <<<"$p" | sort | uniq -c | awk '$1 == 2' | wc -l)" -eq ${#names[@]} ]] &&
    awk -v s="$1-stayer" '$1 == s && $7 == "True" { f = 1 } END { exit !f }' <<<"$p"
}
not_ready() { [[ "$(ready_status "$1")" != True ]]; }
is_ready() { [[ "$(ready_status "$1")" == True ]]; }
# evicted DEP NODE: every Deployment pod of NODE is deleted.
evicted() {
  ! pods | awk -v d="$1-" -v n="$2" 'index($1, d) == 1 && $1 != d "stayer" && $3 == n && $4 == "live" { f = 1 } END { exit !f }'
}
# replaced DEP NODE: the Deployment has all its replicas live and Ready off NODE.
replaced() {
  [[ "$(pods | awk -v d="$1-" -v n="$2" 'index($1, d) == 1 && $1 != d "stayer" && $3 != n && $4 == "live" && $7 == "True"' | wc -l)" -eq $replicas ]]
}
# gone UIDS: none of the pods UIDS is in the API.
gone() {
  local p
  p="$(pods | awk '{ print $2 }')"
  ! grep -qxF -f <(printf '%s\n' "$@") <<<"$p"
}

results=()
failed=0
# run_case NODE CASE: one case with node NODE lost; appends a result row.
run_case() {
  local n="$1" c="$2" dep="$2-$1" t0 before after fail=() t_unknown=- t_evicted=- t_replaced=- t_back=- t_ready=- t_gone=- t_late=- x
  log "case $c, node $n (${kind[$n]}): deploying $dep"
  deploy "$dep" "$n"
  until_true 180 spread_ok "$dep" || { fail+=("the Deployment did not spread two pods a node: $(pods | tr '\t' ' ' | tr '\n' ';')"); }
  before="$(pods)"
  printf '%s\n' "$before" >"$report/$dep.before"
  local lost_uids lost_names lost_cids others
  lost_uids=($(awk -v d="$dep-" -v n="$n" 'index($1, d) == 1 && $1 != d "stayer" && $3 == n { print $2 }' <<<"$before"))
  lost_names=($(awk -v d="$dep-" -v n="$n" 'index($1, d) == 1 && $1 != d "stayer" && $3 == n { print $1 }' <<<"$before"))
  lost_cids=($(awk -v d="$dep-" -v n="$n" 'index($1, d) == 1 && $1 != d "stayer" && $3 == n { print $5 }' <<<"$before"))
  # The pods that must run on undisturbed: the stayer and the other nodes'.
  others="$(awk -v n="$n" -v s="$dep-stayer" '$3 != n || $1 == s { print $1, $2, $3, $5, $6 }' <<<"$before")"
  [[ ${#lost_uids[@]} -eq 2 ]] || fail+=("node $n has ${#lost_uids[@]} of the Deployment's pods, want 2")
  if [[ ${#fail[@]} -eq 0 ]]; then
    t0=$SECONDS
    case "$c" in
      kill) log "SIGKILL to node $n's agent (pid ${pid[$n]})"; kill -KILL "${pid[$n]}"; wait "${pid[$n]}" 2>/dev/null || true ;;
      partition | short) log "node $n cut off from the API server"; kill -USR1 "${proxy_pid[$n]}" ;;
    esac
    if [[ "$c" == short ]]; then
      local unready=0 end=$((SECONDS + short))
      while ((SECONDS < end)); do not_ready "$n" && unready=1; sleep 1; done
      kill -USR2 "${proxy_pid[$n]}"
      t_back=$((SECONDS - t0))
      log "node $n back after ${t_back}s; watching it for $((grace + 10))s"
      end=$((SECONDS + grace + 10))
      while ((SECONDS < end)); do not_ready "$n" && unready=1; sleep 1; done
      [[ $unready -eq 0 ]] || fail+=("node $n left Ready during a ${short}s partition")
    else
      until_true $((grace * 3)) not_ready "$n" && t_unknown=$((SECONDS - t0)) || fail+=("node $n never left Ready")
      x="$(ready_status "$n")"
      [[ "$x" == Unknown ]] || fail+=("node $n's Ready is $x, want Unknown")
      until_true $((toleration * 4 + 30)) evicted "$dep" "$n" && t_evicted=$((SECONDS - t0)) || fail+=("node $n's pods were not evicted")
      until_true 120 replaced "$dep" "$n" && t_replaced=$((SECONDS - t0)) || fail+=("the Deployment was not replaced on the other nodes")
      # The lost node still runs the evicted pods' containers: it has not
      # heard.
      x="$(running_tasks "$n")"
      for cid in "${lost_cids[@]}"; do
        grep -qxF "$cid" <<<"$x" || fail+=("container $cid of an evicted pod stopped while node $n was away")
      done
      # The node lifecycle controller marked the stayer not Ready: the
      # node, once back, must say it is.
      pods | awk -v s="$dep-stayer" '$1 == s && $4 == "live" && $7 == "False" { f = 1 } END { exit !f }' ||
        fail+=("the stayer was not marked not Ready while node $n was away: $(pods | awk -v s="$dep-stayer" '$1 == s' | tr '\t' ' ')")
      # Still away: an admin force-deletes one evicted pod, and a new pod
      # is bound to the node.
      kubectl -n lf delete pod "${lost_names[0]}" --force --grace-period=0 >/dev/null 2>&1 ||
        fail+=("cannot force-delete pod ${lost_names[0]}")
      bound_pod "$dep-late" "$n" | kubectl -n lf apply -f - >/dev/null || fail+=("cannot create pod $dep-late")
      while ((SECONDS - t0 < away)); do sleep 1; done
      case "$c" in
        kill) start_agent "$n" ;;
        partition) kill -USR2 "${proxy_pid[$n]}" ;;
      esac
      t_back=$((SECONDS - t0))
      log "node $n back after ${t_back}s"
      until_true 180 is_ready "$n" && t_ready=$((SECONDS - t0)) || fail+=("node $n not Ready after it came back")
      until_true 120 gone "${lost_uids[@]}" && t_gone=$((SECONDS - t0)) || fail+=("the evicted pods stayed in the API: $(pods | tr '\t' ' ' | tr '\n' ';')")
      # Their containers are stopped (the kubelet may keep them, exited,
      # until its garbage collection).
      until_true 60 eval '! grep -qxF -f <(printf "%s\n" "${lost_cids[@]}") <(running_tasks "$n")' ||
        fail+=("containers of evicted pods still run on node $n: $(running_tasks "$n" | grep -xF -f <(printf '%s\n' "${lost_cids[@]}") | tr '\n' ' ')")
      until_true 60 replaced "$dep" "$n" || fail+=("the Deployment lost replicas after node $n came back")
      until_true 120 pod_ready "$dep-late" && t_late=$((SECONDS - t0)) || fail+=("pod $dep-late, bound to node $n while it was away, is not Ready")
    fi
    after="$(pods)"
    printf '%s\n' "$after" >"$report/$dep.after"
    # Every pod that had to run on does: same UID, node and container, no
    # restart, Ready, not deleted.
    while read -r name uid node cid restarts; do
      awk -v u="$uid" -v n="$node" -v c="$cid" -v r="$restarts" \
        '$2 == u && $3 == n && $4 == "live" && $5 == c && $6 == r && $7 == "True" { f = 1 } END { exit !f }' <<<"$after" ||
        fail+=("pod $name on $node disturbed: before $uid $cid restarts $restarts; after: $(awk -v u="$uid" '$2 == u' <<<"$after" | tr '\t' ' ')")
      grep -qxF "$cid" <(running_tasks "$node") || fail+=("pod $name's container $cid is not running on $node")
    done <<<"$others"
    until_true 30 logs_ok "$dep-stayer" || fail+=("kubectl logs $dep-stayer: $(kubectl -n lf logs "$dep-stayer" 2>&1 | tail -n 1)")
  fi
  local outcome=pass
  if [[ ${#fail[@]} -gt 0 ]]; then
    outcome="FAIL: $(printf '%s; ' "${fail[@]}")"
    failed=1
    log "case $c, node $n: $outcome"
  else
    log "case $c, node $n: pass"
  fi
  results+=("$(printf '| %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s |' "$n" "${kind[$n]}" "$c" "$t_unknown" "$t_evicted" "$t_replaced" "$t_back" "$t_ready" "$t_gone" "$t_late" "$outcome")")
  # Clean up for the next case: the node must be up for its pods to go.
  is_ready "$n" || { [[ "$c" != kill ]] || kill -0 "${pid[$n]}" 2>/dev/null || start_agent "$n"; kill -USR2 "${proxy_pid[$n]}"; until_true 180 is_ready "$n" || true; }
  kubectl -n lf delete deployment "$dep" --wait=true >/dev/null 2>&1 || true
  kubectl -n lf delete pods --all --wait=true --timeout=120s >/dev/null 2>&1 || log "pods of $dep not gone after 120s"
}

start_all=$SECONDS
for k in "${lost_list[@]}"; do
  n=lf-a
  [[ "$k" == podlife ]] || n=lf-k
  for c in "${case_list[@]}"; do
    run_case "$n" "$c"
  done
done

echo "nodes lost and found: nodes ${names[*]} ($(for n in "${names[@]}"; do printf '%s ' "${kind[$n]}"; done| sed 's/ $//')); node monitor grace period ${grace}s, toleration ${toleration}s, short partition ${short}s, away at least ${away}s; $(date -u '+%Y-%m-%d %H:%M UTC'); podlife $podlife_rev; kubelet $("$PODLIFE_CLUSTER_BIN/kubelet" --version 2>/dev/null); $((SECONDS - start_all))s"
echo
echo "| node lost | case | Unknown | evicted | replaced | back | Ready | evicted pods gone | late pod Ready | outcome |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${results[@]}"
exit "$failed"
