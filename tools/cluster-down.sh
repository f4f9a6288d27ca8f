#!/usr/bin/env bash
# Stops a control plane started by tools/cluster-up.sh and removes its state
# directory:
#
#   tools/cluster-down.sh DIR
#
# Stops kube-scheduler, kube-controller-manager, kube-apiserver and etcd, in
# that order, by the PID files in DIR (TERM, then KILL after 10s). A PID is
# signalled only while its command line still names DIR, so a reused PID is
# never hit. Idempotent: a missing DIR is success.
set -euo pipefail

TOOL=cluster-down
log() { echo "$TOOL: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

[[ $# -eq 1 && -n "$1" ]] || die "usage: cluster-down.sh DIR"
if [[ ! -d "$1" ]]; then
  log "$1 does not exist: nothing to do"
  exit 0
fi
DIR="$(cd "$1" && pwd -P)"
[[ "$DIR" != / ]] || die "refusing to work on /"
if [[ ! -f "$DIR/podlife-cluster.env" && -n "$(ls -A "$DIR")" ]]; then
  die "$DIR has no podlife-cluster.env: not a tools/cluster-up.sh directory, not touching it"
fi

# owned PID: whether process PID runs with DIR in its command line.
owned() {
  local argv=()
  { mapfile -d '' -t argv <"/proc/$1/cmdline"; } 2>/dev/null || return 1
  [[ " ${argv[*]} " == *"$DIR/"* ]]
}

# stop NAME: TERM the process in DIR/NAME.pid, KILL it if it outlives 10s.
stop() {
  local name="$1" pidfile="$DIR/$1.pid" pid i
  [[ -f "$pidfile" ]] || return 0
  pid="$(cat "$pidfile")"
  if [[ "$pid" =~ ^[0-9]+$ ]] && owned "$pid"; then
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      owned "$pid" || break
      sleep 0.1
    done
    if owned "$pid"; then
      log "$name (pid $pid) ignored TERM for 10s: killing it"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        owned "$pid" || break
        sleep 0.1
      done
      ! owned "$pid" || die "$name (pid $pid) survived KILL"
    fi
  fi
  rm -f "$pidfile"
}

for name in kube-scheduler kube-controller-manager kube-apiserver etcd; do
  stop "$name"
done
rm -rf "$DIR"
log "removed $DIR"
