#!/usr/bin/env bash
# Measures issue 21's figure "30 pods with a 1 s exec preStop stop" on one
# containerd, for podlife, for a kubelet built from k8s.io/kubernetes (the
# control plane's, tools/cluster-build.sh) and for the runtime alone (the
# floor: no node, the hook, the container stop and the sandbox stop of each
# pod called at once), interleaved round by round so that all three see the
# same machine:
#
#   sudo tools/prestops.sh [--rounds N] [--pods N] [--nodes "floor podlife kubelet"]
#
# Each node runs standalone (static pods from a manifest directory of its
# own, a root directory of its own) on a containerd of tools/containerd-up.sh;
# tools/prestops (Go) writes the manifests, waits for the containers, removes
# the manifests at once and reads from the runtime when each container
# exited and when the last sandbox stopped. Between nodes, what a node left
# on the runtime is removed. Prints one line per run, then the medians per
# node; the last line of stdout is a table row per node.
#
# Env: PODLIFE_KUBELET (a kubelet binary; default: tools/cluster-build.sh's),
# PODLIFE_BINARY (default: built from ./cmd/podlife), PRESTOPS_KEEP=1 (keep
# the work directory with each node's log). Needs root.
set -euo pipefail

TOOL=prestops
log() { printf '%s: %s\n' "$TOOL" "$*" >&2; }
die() { log "$*"; exit 1; }
rounds=3 pods=30 nodes="floor podlife kubelet"
while [[ $# -gt 0 ]]; do
  case "$1" in
  --rounds) rounds="$2"; shift 2 ;;
  --pods) pods="$2"; shift 2 ;;
  --nodes) nodes="$2"; shift 2 ;;
  *) die "usage: prestops.sh [--rounds N] [--pods N] [--nodes \"floor podlife kubelet\"]" ;;
  esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ && "$pods" =~ ^[1-9][0-9]*$ ]] || die "--rounds and --pods are positive numbers"
[[ $EUID -eq 0 ]] || { echo "$TOOL: SKIPPED: needs root (containerd, the nodes' mounts)"; exit 77; }
tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$tools")"
# shellcheck source=tools/proc-lib.sh
source "$tools/proc-lib.sh"
# shellcheck source=tools/node-lib.sh
source "$tools/node-lib.sh" # umount_under

work="$(mktemp -d "${TMPDIR:-/tmp}/podlife-prestops.XXXXXX")"
chmod 0700 "$work"
node_pid="" node_dir=""
stop_standalone() {
  [[ -z "$node_pid" ]] || stop_owned "$1" "$node_dir" "$node_pid"
  node_pid=""
  [[ -z "$node_dir" ]] || umount_under "$node_dir"
}
cleanup() {
  set +e
  stop_standalone node
  [[ -z "${endpoint:-}" ]] || "$work/prestops" -endpoint "$endpoint" -clean 2>/dev/null
  [[ ! -d "$work/containerd" ]] || "$tools/containerd-down.sh" "$work/containerd" >/dev/null 2>&1
  if [[ -n "${PRESTOPS_KEEP:-}" ]]; then
    log "kept the nodes' logs in $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

log "building tools/prestops and podlife"
(cd "$repo" && go build -o "$work/prestops" ./tools/prestops)
podlife="${PODLIFE_BINARY:-}"
if [[ -z "$podlife" && " $nodes " == *" podlife "* ]]; then
  podlife="$work/podlife"
  (cd "$repo" && go build -o "$podlife" ./cmd/podlife)
fi
kubelet="${PODLIFE_KUBELET:-}"
if [[ -z "$kubelet" && " $nodes " == *" kubelet "* ]]; then
  kubelet="$("$tools/cluster-build.sh" | tail -n 1)/kubelet"
fi
log "starting containerd"
endpoint="$(PODLIFE_CONTAINERD_DIR="$work/containerd" "$tools/containerd-up.sh" 2>"$work/containerd-up.log" | tail -n 1)" ||
  die "containerd-up.sh failed: $(tail -n 5 "$work/containerd-up.log")"

# start_standalone NODE DIR: starts NODE standalone with DIR/manifests and DIR/root.
start_standalone() {
  local node="$1" dir="$2"
  mkdir -p "$dir/manifests" "$dir/root"
  chmod 0700 "$dir/root"
  node_dir="$dir"
  case "$node" in
  podlife)
    "$podlife" run --root-dir "$dir/root" --pod-manifest-path "$dir/manifests" --runtime-endpoint "$endpoint" \
      --port 0 --healthz-port 0 ${PRESTOPS_PODLIFE_FLAGS:-} </dev/null >"$dir/node.log" 2>&1 &
    ;;
  kubelet)
    # Standalone: no API server, no kubelet API; cgroupfs and no QoS
    # cgroups, as tools/conformance.sh runs it here; images never
    # garbage-collected (they cannot be pulled again here).
    cat >"$dir/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: $dir/manifests
containerRuntimeEndpoint: $endpoint
enableServer: false
authentication:
  webhook:
    enabled: false
  anonymous:
    enabled: false
authorization:
  mode: AlwaysAllow
readOnlyPort: 0
healthzPort: 0
failSwapOn: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
YAML
    "$kubelet" --config "$dir/kubelet.yaml" --root-dir "$dir/root" --fail-cgroupv1=false \
      </dev/null >"$dir/node.log" 2>&1 &
    ;;
  esac
  node_pid=$!
}

declare -A lines
for ((r = 1; r <= rounds; r++)); do
  for node in $nodes; do
    dir="$work/$node-$r"
    mkdir -p "$dir"
    if [[ "$node" == floor ]]; then
      out="$("$work/prestops" -endpoint "$endpoint" -floor -pods "$pods")" || die "floor failed"
    else
      start_standalone "$node" "$dir"
      out="$("$work/prestops" -endpoint "$endpoint" -manifests "$dir/manifests" -pods "$pods" -node "$node" 2>"$dir/prestops.err")" ||
        die "$node: $(cat "$dir/prestops.err"); its log: $(tail -n 20 "$dir/node.log")"
      stop_standalone "$node"
    fi
    "$work/prestops" -endpoint "$endpoint" -clean
    echo "round $r: $out (load $(cut -d' ' -f1-3 /proc/loadavg))"
    lines[$node]+="$out"$'\n'
  done
done
# Medians per node of each figure.
echo "| node | first exit | last exit | last sandbox stopped | rounds |"
echo "|---|---|---|---|---|"
for node in $nodes; do
  printf '%s' "${lines[$node]}" | awk -v node="$node" '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1], NR] = kv[2] + 0 } }
    function median(k,   a, i, j, n, t) {
      n = 0; for (i = 1; i <= NR; i++) a[++n] = v[k, i]
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END { printf "| %s | %.2f s | %.2f s | %.2f s | %d |\n", node, median("first_exit"), median("last_exit"), median("last_sandbox_stop"), NR }'
done
