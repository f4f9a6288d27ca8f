#!/usr/bin/env bash
# Measures what a hostile pod costs the agent, on a containerd of
# tools/containerd-up.sh (issue 30, item 5):
#
#   ENDPOINT=$(PODLIFE_CONTAINERD_DIR=$D tools/containerd-up.sh | tail -1)
#   sudo tools/hostile-pods.sh "$ENDPOINT" SCENARIO [SECONDS]
#
# SCENARIO is one of
#   log-line      a container writes a 64 MiB line without a newline, then
#                 `podlife logs --tail 1` and `podlife logs --limit-bytes 1048576` read it
#   hosts         a container appends APPEND_BYTES (default 200000000) to its
#                 /etc/hosts and exits 1, restartPolicy Always: a restart loop
#                 that grows the file the agent writes for the pod
#   probe-output  an exec readiness probe prints 50 MB every 2 s
#   crash-loop    a container exits 1 at once, restartPolicy Always: the dead
#                 instances containerd keeps
#   agent-restart a pod of two containers; the agent is stopped with SIGTERM,
#                 started again, then killed with SIGKILL and started again:
#                 the containers' IDs before and after (none stopped, none
#                 duplicated) and the pod's restarts
#   hostpath-root a pod mounting hostPath / (read-only) reads /etc/hostname
#                 of the host: honoured, as the kubelet does
# Each runs a fresh agent (built from ./cmd/podlife) with a new root
# directory for SECONDS (default 60), prints what it measured and the
# agent's peak RSS (VmHWM), then deletes the pod, waits until it stopped
# and stops the agent. The last line of stdout is the scenario's result.
set -euo pipefail

TOOL=hostile-pods
log() { printf '%s: %s\n' "$TOOL" "$*" >&2; }
die() { log "$*"; exit 1; }
usage="usage: hostile-pods.sh unix:///DIR/containerd.sock log-line|hosts|probe-output|crash-loop|agent-restart|hostpath-root [SECONDS]"
[[ $# -ge 2 && $# -le 3 && "$1" == unix://* ]] || die "$usage"
[[ $EUID -eq 0 ]] || die "needs root (the agent mounts and writes the pods' files as the runtime's user)"
endpoint="$1" scenario="$2" seconds="${3:-60}"
[[ "$seconds" =~ ^[0-9]+$ ]] || die "SECONDS is a number: $seconds"
tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/proc-lib.sh
source "$tools/proc-lib.sh"
command -v ctr >/dev/null || die "needs ctr (containerd's client) to see the pod's containers"

dir="$(mktemp -d)"
chmod 0700 "$dir"
sock="${endpoint#unix://}"
node="hostile-$$"
pod="hostile-$scenario"
agent_pid=""
bin="$dir/podlife"
(cd "$tools/.." && go build -o "$bin" ./cmd/podlife)
mkdir -p "$dir/manifests"

# ctr_pod_containers [STATE]: the pod's containers (ID and state), all or
# those in STATE (RUNNING, STOPPED...).
ctr_pod_containers() {
  local ids
  ids="$(ctr -a "$sock" -n k8s.io containers ls -q "labels.\"io.kubernetes.pod.name\"==$pod-$node")" || return 0
  [[ -n "$ids" ]] || return 0
  ctr -a "$sock" -n k8s.io tasks ls | awk -v ids="$ids" -v want="${1:-}" '
    BEGIN {split(ids, a, "\n"); for (i in a) mine[a[i]] = 1}
    ($1 in mine) && (want == "" || $3 == want) {print $1, $3}'
}
# pod_containers_all: every container of the pod containerd holds, with or
# without a task (a dead instance has none once it was cleaned up).
pod_containers_all() {
  ctr -a "$sock" -n k8s.io containers ls -q "labels.\"io.kubernetes.pod.name\"==$pod-$node" 2>/dev/null || true
}
start_agent() {
  "$bin" run --root-dir "$dir/root" --pod-manifest-path "$dir/manifests" --runtime-endpoint "$endpoint" \
    --node-name "$node" --port 0 --healthz-port 0 --file-check-frequency 1s >>"$dir/agent.log" 2>&1 &
  agent_pid=$!
  log "agent pid $agent_pid, root $dir/root"
}
hwm() { awk '/^VmHWM:/ {print $2}' "/proc/$agent_pid/status"; }
alive() { owned_by "$dir" "$agent_pid" || die "the agent exited: $(tail -5 "$dir/agent.log")"; }
# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds.
wait_for() {
  local n="$1" what="$2" i
  shift 2
  for ((i = 0; i < n * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  die "$what: not within ${n}s; agent log: $(tail -5 "$dir/agent.log")"
}
running_count() { [[ "$(ctr_pod_containers RUNNING | wc -l)" -ge "$1" ]]; }
cleanup() {
  if [[ -n "$agent_pid" ]] && owned_by "$dir" "$agent_pid"; then
    rm -f "$dir/manifests/pod.yaml"
    local i
    for ((i = 0; i < 120; i++)); do
      [[ -z "$(ctr_pod_containers RUNNING)" ]] && break
      sleep 0.5
    done
    [[ -z "$(ctr_pod_containers RUNNING)" ]] || log "the pod still runs after 60s: $(ctr_pod_containers RUNNING | tr '\n' ' ')"
    stop_owned agent "$dir" "$agent_pid"
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

# write_pod RESTART_POLICY CONTAINERS_YAML [VOLUMES_YAML]
write_pod() {
  cat >"$dir/manifests/.pod.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $pod, namespace: default}
spec:
  restartPolicy: $1
  terminationGracePeriodSeconds: 1
  containers:
$2
${3:-}
YAML
  mv "$dir/manifests/.pod.yaml" "$dir/manifests/pod.yaml"
}
busybox="image: localhost/podlife/busybox:latest
    imagePullPolicy: IfNotPresent"

start_agent
case "$scenario" in
log-line)
  write_pod Always "  - name: app
    $busybox
    command: [sh, -c, \"head -c 67108864 /dev/zero | tr '\\\\0' x; exec sleep 3600\"]"
  wait_for 60 "the container runs" running_count 1
  sleep "$seconds"
  alive
  before="$(hwm)"
  tail_bytes="$("$bin" logs --root-dir "$dir/root" --tail 1 "$pod-$node" 2>&1 | wc -c)"
  after_tail="$(hwm)"
  limit_bytes="$("$bin" logs --root-dir "$dir/root" --limit-bytes 1048576 "$pod-$node" 2>&1 | wc -c)"
  after="$(hwm)"
  result="log-line: VmHWM ${before} kB after the write, ${after_tail} kB after logs --tail 1 (${tail_bytes} bytes out), ${after} kB after logs --limit-bytes 1048576 (${limit_bytes} bytes out)"
  ;;
hosts)
  bytes="${APPEND_BYTES:-200000000}"
  [[ "$bytes" =~ ^[0-9]+$ ]] || die "APPEND_BYTES is a number: $bytes"
  write_pod Always "  - name: app
    $busybox
    command: [sh, -c, \"head -c $bytes /dev/zero | tr '\\\\0' x >> /etc/hosts; exit 1\"]"
  sleep "$seconds"
  alive
  runs="$(find "$dir/root/pods" -path "*_$pod-$node*/app/*.log" 2>/dev/null | wc -l)"
  result="hosts: VmHWM $(hwm) kB after ${seconds}s of a container appending $bytes bytes to /etc/hosts and exiting 1 ($runs runs)"
  ;;
probe-output)
  write_pod Always "  - name: app
    $busybox
    command: [sleep, \"3600\"]
    readinessProbe:
      periodSeconds: 2
      timeoutSeconds: 10
      exec: {command: [sh, -c, \"head -c 50000000 /dev/zero | tr '\\\\0' x\"]}"
  wait_for 60 "the container runs" running_count 1
  sleep "$seconds"
  alive
  probes="$(grep -c 'probe' "$dir/agent.log" || true)"
  ready="$(grep -o 'msg="[^"]*probe[^"]*"' "$dir/agent.log" | sort | uniq -c | sort -rn | head -3 | tr -s ' ' | tr '\n' ';')"
  first="$(grep -m1 "probe errored" "$dir/agent.log" | cut -c1-400 || true)"
  result="probe-output: VmHWM $(hwm) kB after ${seconds}s of an exec readiness probe printing 50 MB every 2 s; $probes agent log lines mention a probe: $ready the first: $first"
  ;;
crash-loop)
  write_pod Always "  - name: app
    $busybox
    command: [sh, -c, \"exit 1\"]"
  sleep "$seconds"
  alive
  restarts="$("$bin" status --root-dir "$dir/root" 2>/dev/null | awk -v p="$pod-$node" '$0 ~ p' | head -1)"
  kept="$(pod_containers_all | wc -l)"
  result="crash-loop: containerd keeps $kept instance(s) of the pod (sandbox included) after ${seconds}s of a container exiting 1 at once; status: $restarts; VmHWM $(hwm) kB"
  ;;
agent-restart)
  write_pod Always "  - name: a
    $busybox
    command: [sleep, \"3600\"]
  - name: b
    $busybox
    command: [sleep, \"3600\"]"
  wait_for 60 "both containers run" running_count 3
  before="$(ctr_pod_containers RUNNING | sort)"
  for sig in TERM KILL; do
    kill -"$sig" "$agent_pid"
    gone_within "$dir" "$agent_pid" 300 || die "the agent outlived SIG$sig by 30s"
    still="$(ctr_pod_containers RUNNING | sort)"
    [[ "$still" == "$before" ]] || die "after SIG$sig of the agent the pod's running tasks changed: $still, want $before"
    start_agent
    sleep "$seconds"
    alive
    after="$(ctr_pod_containers RUNNING | sort)"
    [[ "$after" == "$before" ]] || die "after SIG$sig and a restart the pod's running tasks are $after, want $before"
    log "SIG$sig, restart, ${seconds}s: the same $(wc -l <<<"$after") tasks run"
  done
  all="$(pod_containers_all | wc -l)"
  result="agent-restart: after SIGTERM and SIGKILL of the agent, each followed by a restart, the same $(wc -l <<<"$before") tasks (sandbox and 2 containers) run, $all container(s) in containerd: none stopped, none duplicated"
  ;;
hostpath-root)
  write_pod Never "  - name: app
    $busybox
    command: [cat, /host/etc/hostname]
    volumeMounts: [{name: root, mountPath: /host, readOnly: true}]" "  volumes: [{name: root, hostPath: {path: /}}]"
  sleep "$seconds"
  alive
  out="$("$bin" logs --root-dir "$dir/root" "$pod-$node" 2>&1 || true)"
  status="$("$bin" status --root-dir "$dir/root" 2>&1 | awk -v p="$pod-$node" '$0 ~ p' | head -1)"
  result="hostpath-root: the container read the host's /etc/hostname as \"$out\" (the host's is \"$(cat /etc/hostname)\"); status: $status"
  ;;
*) die "$usage" ;;
esac
log "$result"
echo "$result"
