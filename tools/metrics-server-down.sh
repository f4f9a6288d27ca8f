#!/usr/bin/env bash
# Stops the metrics-server that tools/metrics-server-up.sh started for the
# cluster in DIR (a tools/cluster-up.sh directory) and removes what it put in
# the cluster (the APIService first: a registered but unreachable aggregated
# API makes every discovery slow), when the API server still answers. Run it
# before tools/cluster-down.sh, which does not know metrics-server.
#
#   tools/metrics-server-down.sh "$PODLIFE_CLUSTER_DIR"
set -euo pipefail

TOOL=metrics-server-down
log() { echo "$TOOL: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}
[[ $# -eq 1 && -n "$1" ]] || die "usage: metrics-server-down.sh CLUSTER_DIR"
[[ -d "$1/metrics-server" ]] || {
  log "$1/metrics-server does not exist: nothing to do"
  exit 0
}
CLUSTER="$(cd "$1" && pwd -P)"
DIR="$CLUSTER/metrics-server"

# shellcheck source=tools/proc-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/proc-lib.sh"
if [[ -f "$CLUSTER/admin.kubeconfig" && -n "${PODLIFE_CLUSTER_BIN:-}" && -x "$PODLIFE_CLUSTER_BIN/kubectl" ]]; then
  k=("$PODLIFE_CLUSTER_BIN/kubectl" --kubeconfig "$CLUSTER/admin.kubeconfig" --request-timeout 10s)
  "${k[@]}" delete --ignore-not-found apiservice v1beta1.metrics.k8s.io >&2 || log "could not delete the APIService (is the API server down?)"
  "${k[@]}" -n kube-system delete --ignore-not-found service metrics-server >&2 || true
  "${k[@]}" -n kube-system delete --ignore-not-found endpointslice metrics-server-host >&2 || true
  "${k[@]}" delete --ignore-not-found clusterrolebinding system:podlife-metrics-server podlife-metrics-server:system:auth-delegator >&2 || true
  "${k[@]}" delete --ignore-not-found clusterrole system:podlife-metrics-server >&2 || true
  "${k[@]}" -n kube-system delete --ignore-not-found rolebinding podlife-metrics-server-auth-reader >&2 || true
fi
if [[ -f "$DIR/metrics-server.pid" ]]; then
  stop_owned metrics-server "$DIR" "$(cat "$DIR/metrics-server.pid")"
fi
rm -rf "$DIR"
log "removed $DIR"
