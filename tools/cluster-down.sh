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

# shellcheck source=tools/proc-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/proc-lib.sh"

# stop NAME: stops the process in DIR/NAME.pid.
stop() {
  local pidfile="$DIR/$1.pid"
  [[ -f "$pidfile" ]] || return 0
  stop_owned "$1" "$DIR" "$(cat "$pidfile")"
  rm -f "$pidfile"
}

for name in kube-scheduler kube-controller-manager kube-apiserver etcd; do
  stop "$name"
done
rm -rf "$DIR"
log "removed $DIR"
