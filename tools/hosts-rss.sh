#!/usr/bin/env bash
# Measures issue 21's acceptance line "a container appending 400 MB to
# /etc/hosts in a restart loop: the agent's peak RSS stays under 100 MB"
# on a containerd of tools/containerd-up.sh:
#
#   ENDPOINT=$(PODLIFE_CONTAINERD_DIR=$D tools/containerd-up.sh | tail -1)
#   sudo tools/hosts-rss.sh "$ENDPOINT" [PODLIFE_BINARY] [SECONDS]
#
# It runs the agent (PODLIFE_BINARY, default: built from ./cmd/podlife)
# with a new root directory and one static pod, restartPolicy Always, whose
# container appends APPEND_BYTES (default 400000000) to its /etc/hosts and
# exits 1; after SECONDS (default 120) it prints the container's runs (its
# log files) and the agent's peak RSS (VmHWM of /proc/PID/status), deletes
# its pod's manifest, waits until the agent has stopped the pod, stops the
# agent and removes its directory. Needs ctr (to see the pod's tasks). The
# last line of stdout is "runs N VmHWM K kB".
set -euo pipefail

TOOL=hosts-rss
log() { printf '%s: %s\n' "$TOOL" "$*" >&2; }
die() { log "$*"; exit 1; }
[[ $# -ge 1 && $# -le 3 && "$1" == unix://* ]] || die "usage: hosts-rss.sh unix:///DIR/containerd.sock [PODLIFE_BINARY] [SECONDS]"
[[ $EUID -eq 0 ]] || die "needs root (the agent mounts and writes the pods' files as the runtime's user)"
endpoint="$1" seconds="${3:-120}" bytes="${APPEND_BYTES:-400000000}"
[[ "$seconds" =~ ^[0-9]+$ && "$bytes" =~ ^[0-9]+$ ]] || die "SECONDS and APPEND_BYTES are numbers"
tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/proc-lib.sh
source "$tools/proc-lib.sh"

dir="$(mktemp -d)"
chmod 0700 "$dir"
agent_pid=""
sock="${endpoint#unix://}"
# pod_tasks: the running tasks (sandbox, containers) of the pod.
pod_tasks() {
  local ids
  ids="$(ctr -a "$sock" -n k8s.io containers ls -q 'labels."io.kubernetes.pod.name"~="^hosts-append-"')" || return 0
  [[ -n "$ids" ]] || return 0
  ctr -a "$sock" -n k8s.io tasks ls | awk -v ids="$ids" 'BEGIN {split(ids, a, "\n"); for (i in a) want[a[i]] = 1} $3 == "RUNNING" && ($1 in want) {print $1}'
}
# cleanup deletes the pod (its manifest) and waits until the agent has
# stopped it, then stops the agent: the runtime is left without it, for
# whatever runs next there.
cleanup() {
  if [[ -n "$agent_pid" ]]; then
    rm -f "$dir/manifests/hosts.yaml"
    local i
    for ((i = 0; i < 120; i++)); do
      [[ -z "$(pod_tasks)" ]] && break
      sleep 0.5
    done
    [[ -z "$(pod_tasks)" ]] || log "the pod still runs in the runtime after 60s: $(pod_tasks | tr '\n' ' ')"
    stop_owned agent "$dir" "$agent_pid"
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

bin="${2:-}"
if [[ -z "$bin" ]]; then
  bin="$dir/podlife"
  (cd "$tools/.." && go build -o "$bin" ./cmd/podlife)
fi
[[ -x "$bin" ]] || die "$bin is not an executable"

mkdir -p "$dir/manifests"
cat >"$dir/manifests/hosts.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata: {name: hosts-append, namespace: default}
spec:
  restartPolicy: Always
  terminationGracePeriodSeconds: 1
  containers:
  - name: append
    image: localhost/podlife/busybox:latest
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "head -c $bytes /dev/zero | tr '\\\\0' x >> /etc/hosts; exit 1"]
YAML

"$bin" run --root-dir "$dir/root" --pod-manifest-path "$dir/manifests" --runtime-endpoint "$endpoint" \
  --address 127.0.0.1:0 --port 0 --file-check-frequency 1s >"$dir/agent.log" 2>&1 &
agent_pid=$!
log "agent pid $agent_pid ($bin), root $dir/root; waiting ${seconds}s"
sleep "$seconds"
owned_by "$dir" "$agent_pid" || die "the agent exited: $(tail -5 "$dir/agent.log")"
hwm="$(awk '/^VmHWM:/ {print $2}' "/proc/$agent_pid/status")"
runs="$(find "$dir/root/pods" -path '*_hosts-append-*/append/*.log' 2>/dev/null | wc -l)"
log "the container ran $runs times; the agent's peak RSS (VmHWM) is $hwm kB"
echo "runs $runs VmHWM $hwm kB"
