#!/usr/bin/env bash
# A busy node, podlife against a real kubelet: the same 100 pods on the same
# containerd and control plane, under a kubelet built from k8s.io/kubernetes
# (tools/cluster-build.sh, as the control plane is) and under podlife, in
# interleaved rounds, and a table of the medians:
#
#   sudo tools/busy-node.sh [--rounds N] [--pods N] [--window DURATION] [--report DIR]
#                           [--nodes kubelet,podlife] [--podlife BINARY]
#
# Each round runs each node in turn (the kubelet first in odd rounds,
# podlife first in even ones) as the cluster's only node, with a new root
# directory and the node identity tools/cluster-up.sh minted, and
# tools/busynode measures it (see its package doc): N pods (default 100)
# created at once, bound to the node, one idle busybox container each that
# exits on SIGTERM, grace 1 s; p50/p90/p99 of create → Running with every
# container started (the kubelet's pod startup SLI; images are local) and
# create → all Running; with the pods idle, the node process's CPU
# (utime+stime of /proc/PID/stat over --window, default 30s, after 10 s of
# settling), containerd's, and the node's VmRSS and VmHWM; then all deleted
# at once: p50/p99 of delete → gone from the API, delete → all gone, and
# delete → no sandbox or container running in containerd (stopped) and
# none left at all (removed; waited for at most 75 s, else "not reached").
# Between nodes the node is stopped, its Node object deleted, and whatever
# it left in containerd removed (busynode clean).
#
# --nodes runs only the nodes named (in that order in odd rounds, reversed
# in even ones); --podlife measures that podlife binary instead of one
# built from this checkout (a candidate fix, say).
#
# Both nodes run with their defaults (the kubelet's configuration is
# tools/node-lib.sh's kubelet_config, as tools/conformance.sh runs it).
# Results: one JSON line per node and round in REPORT/results.jsonl; the
# nodes' logs in REPORT too. stdout: the table (Markdown), the date, the
# commit and the load average before and after.
#
# Needs root, containerd (tools/containerd-up.sh) and the control plane's
# binaries with a kubelet (tools/cluster-build.sh); without them it prints
# a line starting "SKIPPED:" and exits 0.
set -euo pipefail

tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$tools")"
TOOL=busy-node
log() { echo "$TOOL: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}
skip() {
  echo "SKIPPED: $TOOL: $*"
  exit 0
}
usage() {
  log "usage: busy-node.sh [--rounds N] [--pods N] [--window DURATION] [--report DIR] [--nodes kubelet,podlife] [--podlife BINARY]"
  exit 2
}
# shellcheck source=tools/node-lib.sh
source "$tools/node-lib.sh"

rounds=3 pods=100 window=30s report="" nodes=kubelet,podlife podlife_bin=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds | --pods | --window | --report | --nodes | --podlife)
      [[ $# -ge 2 && -n "$2" ]] || { log "$1 needs a value"; usage; }
      case "$1" in
        --rounds) rounds="$2" ;;
        --pods) pods="$2" ;;
        --window) window="$2" ;;
        --report) report="$2" ;;
        --nodes) nodes="$2" ;;
        --podlife) podlife_bin="$2" ;;
      esac
      shift 2
      ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *) log "unknown argument $1"; usage ;;
  esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { log "--rounds must be a positive number, not $rounds"; usage; }
[[ "$pods" =~ ^[1-9][0-9]*$ ]] || { log "--pods must be a positive number, not $pods"; usage; }
IFS=, read -r -a node_list <<<"$nodes"
for kind in "${node_list[@]}"; do
  case "$kind" in
    kubelet | podlife) ;;
    *) log "--nodes names kubelet and podlife, not $kind"; usage ;;
  esac
done
[[ ${#node_list[@]} -ge 1 ]] || usage
if [[ -n "$podlife_bin" ]]; then
  [[ -x "$podlife_bin" ]] || { log "--podlife $podlife_bin is not an executable"; usage; }
  podlife_bin="$(cd "$(dirname "$podlife_bin")" && pwd)/$(basename "$podlife_bin")"
fi
[[ "$window" =~ ^([0-9]+(\.[0-9]+)?(h|m|s))+$ ]] || { log "--window must be a Go duration (e.g. 30s), not $window"; usage; }

[[ $(id -u) -eq 0 ]] || skip "needs root (containerd and the nodes); try: sudo $0 $*"
command -v containerd >/dev/null || skip "no containerd on PATH (Debian package: containerd)"
command -v go >/dev/null || skip "no go on PATH (podlife and busynode are built from this checkout)"
if ! cbin="$("$tools/cluster-build.sh" 2>/dev/null | tail -n 1)" || [[ ! -x "$cbin/kubelet" ]]; then
  skip "no control plane binaries with a kubelet (tools/cluster-build.sh failed or built none)"
fi

if [[ -z "$report" ]]; then
  report="$(mktemp -d "${TMPDIR:-/tmp}/podlife-busy-node.XXXXXX")"
fi
mkdir -p "$report"
report="$(cd "$report" && pwd)"
: >"$report/results.jsonl"
work="$(mktemp -d "${TMPDIR:-/tmp}/podlife-busy-node-run.XXXXXX")"
chmod 0700 "$work"
containerd_dir="$work/containerd" cluster_dir="$work/cluster" node_pid="" node_kind="" node_root=""
cleanup() {
  local rc=$?
  set +e
  stop_node "$node_kind"
  [[ -z "$node_root" || ! -d "$node_root" ]] || umount_under "$node_root"
  [[ ! -d "$containerd_dir" ]] || "$tools/containerd-down.sh" "$containerd_dir" >>"$report/teardown.log" 2>&1
  [[ ! -d "$cluster_dir" ]] || "$tools/cluster-down.sh" "$cluster_dir" >>"$report/teardown.log" 2>&1
  umount_under "$work"
  rm -rf "$work"
  log "stopped everything it started; report in $report"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "report directory: $report"
log "building podlife and busynode"
(cd "$repo" && go build -o "$work/busynode" ./tools/busynode)
if [[ -n "$podlife_bin" ]]; then
  cp "$podlife_bin" "$work/podlife"
  podlife_rev="$podlife_bin"
else
  # The checkout as built (edits made during the run do not count).
  podlife_rev="$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD || echo '+dirty')"
  (cd "$repo" && go build -o "$work/podlife" ./cmd/podlife)
fi

log "starting containerd"
endpoint="$(PODLIFE_CONTAINERD_DIR="$containerd_dir" "$tools/containerd-up.sh" 2>"$report/containerd-up.log" | tail -n 1)" ||
  die "containerd-up.sh failed: $(tail -n 5 "$report/containerd-up.log")"
containerd_pid="$(cat "$containerd_dir/containerd.pid")"
log "starting the control plane"
env_out="$(PODLIFE_CLUSTER_DIR="$cluster_dir" "$tools/cluster-up.sh" 2>"$report/cluster-up.log")" ||
  die "cluster-up.sh failed: $(tail -n 5 "$report/cluster-up.log")"
eval "$(grep '^export ' <<<"$env_out")"
kubectl=("$PODLIFE_CLUSTER_BIN/kubectl" --kubeconfig "$KUBECONFIG")

# one_node KIND ROUND: a round of node KIND, from its start to an empty
# runtime and no Node object.
one_node() {
  local kind="$1" round="$2" bin
  case "$kind" in
    podlife) bin="$work/podlife" ;;
    kubelet) bin="$PODLIFE_CLUSTER_BIN/kubelet" ;;
  esac
  node_kind="$kind" node_root="$work/node-$kind-$round"
  start_node "$kind" "$bin" "$endpoint" "$node_root" "$report/$kind-$round.log"
  log "round $round: waiting for node $PODLIFE_NODE_NAME ($kind, pid $node_pid) to be Ready"
  wait_node_ready "$kind" "$report/$kind-$round.log" 180
  log "round $round: measuring the $kind"
  "$work/busynode" run -kubeconfig "$KUBECONFIG" -node "$PODLIFE_NODE_NAME" -node-pid "$node_pid" \
    -runtime-endpoint "$endpoint" -runtime-pid "$containerd_pid" -label "$kind" -round "$round" \
    -pods "$pods" -window "$window" >>"$report/results.jsonl" 2>>"$report/busynode.log" ||
    die "busynode run failed for the $kind in round $round: $(tail -n 5 "$report/busynode.log")"
  tail -n 1 "$report/results.jsonl" >&2
  stop_node "$kind"
  umount_under "$node_root"
  rm -rf "$node_root"
  "${kubectl[@]}" delete node "$PODLIFE_NODE_NAME" --ignore-not-found --wait=true >/dev/null
  "$work/busynode" clean -runtime-endpoint "$endpoint" 2>>"$report/busynode.log"
}

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  order=("${node_list[@]}")
  if ((round % 2 == 0)); then
    order=()
    for ((i = ${#node_list[@]} - 1; i >= 0; i--)); do order+=("${node_list[$i]}"); done
  fi
  for kind in "${order[@]}"; do
    one_node "$kind" "$round"
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

echo "busy node: $pods pods, $rounds interleaved rounds, idle window $window; $(date -u '+%Y-%m-%d %H:%M UTC'); podlife $podlife_rev; kubelet $("$PODLIFE_CLUSTER_BIN/kubelet" --version 2>/dev/null); containerd $(containerd --version | awk '{print $3}')"
echo "load average (1, 5, 15 min): before $load_before, after $load_after"
"$work/busynode" table -nodes "$nodes" "$report/results.jsonl"
