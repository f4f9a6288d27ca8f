#!/usr/bin/env bash
# Builds kubeadm from the Go module proxy and prints the directory that holds
# it as the last line of stdout:
#
#   BIN=$(tools/kubeadm-build.sh | tail -1)
#
# kubeadm comes from k8s.io/kubernetes through the wrapper module
# tools/kubeadm: tools/cluster/kube's, plus what cmd/kubeadm alone imports
# (CoreDNS's corefile migration, the system validators), kept apart so that
# the control plane's cached build does not change with it. It is the judge
# of a node installed as a kubelet: the KubeletConfiguration it writes
# (agent/config/kubeletconfig/testdata/kubeadm-config.yaml was printed by it,
# with `kubeadm config print init-defaults --component-configs
# KubeletConfiguration`) and, later, kubeadm join.
#
# The binary goes to $CACHE/kube-<version>-<inputs>/bin, where CACHE is
# $PODLIFE_CLUSTER_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/podlife/cluster;
# a stamp records what built it (tools/build-cache.sh). A cold build took
# 28 min at load 40-50 here; a rebuild with the Go build cache warm, 129 s.
# Diagnostics go to stderr.
set -euo pipefail

tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$tools")"
TOOL=kubeadm-build
log() { echo "$TOOL: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

command -v go >/dev/null || die "go is not on PATH"
# shellcheck source=tools/build-cache.sh
source "$tools/build-cache.sh"

mod="$tools/kubeadm"
KUBE_VERSION="$(mod_version "$mod/go.mod" k8s.io/kubernetes)"
API_VERSION="$(mod_version "$repo/go.mod" k8s.io/api)"
[[ -n "$KUBE_VERSION" && -n "$API_VERSION" ]] || die "cannot read the versions from tools/kubeadm/go.mod and go.mod"
check_kube_minor "$KUBE_VERSION" "$API_VERSION" tools/kubeadm/go.mod

CACHE="${PODLIFE_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podlife/cluster}"
ldflags="$(kube_link_flags "$KUBE_VERSION")"
stamp="$(
  go version
  echo "$ldflags"
  cat "$mod/go.mod" "$mod/go.sum" | sha256sum
)"
BIN="$CACHE/kubeadm-$KUBE_VERSION-$(sha256sum <<<"$stamp" | cut -c1-12)/bin"
if cache_up_to_date "$BIN" "$stamp" kubeadm; then
  log "up to date: kubeadm $KUBE_VERSION in $BIN"
  echo "$BIN"
  exit 0
fi
cache_begin "$BIN"
t0=$SECONDS
log "building kubeadm (k8s.io/kubernetes/cmd/kubeadm)"
(cd "$mod" && CGO_ENABLED=0 GOFLAGS=-mod=readonly GOWORK=off \
  go build -ldflags="$ldflags" -o "$BIN/kubeadm.tmp" k8s.io/kubernetes/cmd/kubeadm) ||
  die "building kubeadm failed"
mv "$BIN/kubeadm.tmp" "$BIN/kubeadm"
cache_done "$BIN" "$stamp"
log "built kubeadm $KUBE_VERSION in $((SECONDS - t0))s into $BIN"
echo "$BIN"
