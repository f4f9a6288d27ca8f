#!/usr/bin/env bash
# Builds the control plane for podlife's cluster mode from the Go module proxy
# and prints the directory that holds the binaries as the last line of stdout:
#
#   BIN=$(tools/cluster-build.sh | tail -1)
#
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and the
# kubelet come from k8s.io/kubernetes, etcd from go.etcd.io/etcd/server/v3.
# The control plane (tools/cluster-up.sh) runs all but the kubelet; the
# kubelet is the reference node of the conformance tool (tools/conformance.sh),
# built here so both come from the same sources with the same link flags.
# They are built through the wrapper modules in tools/cluster/kube and tools/cluster/etcd: k8s.io/kubernetes's go.mod
# points its staging modules (k8s.io/api, client-go, ...) at ./staging, and
# etcd's server module points its siblings at ../api etc.; replace lines there
# pin them to the published versions instead. The Kubernetes minor must match
# the project's k8s.io/api (go.mod); the script checks that.
#
# The binaries go to $CACHE/<versions>-<inputs>/bin, where CACHE is
# $PODLIFE_CLUSTER_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/podlife/cluster,
# and <inputs> is a short hash of what builds them (the wrapper go.mod and
# go.sum files, the Go version, the link flags): two checkouts with different
# wrapper modules (another branch, an older clone) then keep separate
# directories instead of rebuilding over each other's binaries. A stamp file
# there records those inputs in full; when it matches and every binary exists,
# the script builds nothing. Builds use the normal Go build cache, so a
# rebuild after a change is incremental. Diagnostics go to stderr.
set -euo pipefail

tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$tools")"
TOOL=cluster-build
log() { echo "$TOOL: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

command -v go >/dev/null || die "go is not on PATH"

# shellcheck source=tools/build-cache.sh
source "$tools/build-cache.sh"

KUBE_VERSION="$(mod_version "$tools/cluster/kube/go.mod" k8s.io/kubernetes)"
ETCD_VERSION="$(mod_version "$tools/cluster/etcd/go.mod" go.etcd.io/etcd/server/v3)"
API_VERSION="$(mod_version "$repo/go.mod" k8s.io/api)"
[[ -n "$KUBE_VERSION" && -n "$ETCD_VERSION" && -n "$API_VERSION" ]] ||
  die "cannot read the versions from tools/cluster/*/go.mod and go.mod"
check_kube_minor "$KUBE_VERSION" "$API_VERSION" tools/cluster/kube/go.mod

CACHE="${PODLIFE_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podlife/cluster}"
# The version kube-apiserver reports (and kubectl checks for skew) is set at
# link time.
kube_ldflags="$(kube_link_flags "$KUBE_VERSION")"

stamp="$(
  go version
  echo "$kube_ldflags"
  cat "$tools/cluster/kube/go.mod" "$tools/cluster/kube/go.sum" \
    "$tools/cluster/etcd/go.mod" "$tools/cluster/etcd/go.sum" | sha256sum
)"
BIN="$CACHE/kube-$KUBE_VERSION-etcd-$ETCD_VERSION-$(sha256sum <<<"$stamp" | cut -c1-12)/bin"
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet)

if cache_up_to_date "$BIN" "$stamp" "${binaries[@]}"; then
  log "up to date: Kubernetes $KUBE_VERSION and etcd $ETCD_VERSION in $BIN"
  echo "$BIN"
  exit 0
fi

cache_begin "$BIN"
# build_one DIR OUT PACKAGE LDFLAGS builds PACKAGE in wrapper module DIR.
build_one() {
  local dir="$1" out="$2" pkg="$3" ldflags="$4" t0=$SECONDS
  log "building $out ($pkg)"
  (cd "$dir" && CGO_ENABLED=0 GOFLAGS=-mod=readonly GOWORK=off \
    go build -ldflags="$ldflags" -o "$BIN/$out.tmp" "$pkg") ||
    die "building $pkg failed"
  mv "$BIN/$out.tmp" "$BIN/$out"
  log "built $out in $((SECONDS - t0))s"
}
total=$SECONDS
build_one "$tools/cluster/etcd" etcd go.etcd.io/etcd/server/v3 "-s -w"
build_one "$tools/cluster/kube" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kube_ldflags"
build_one "$tools/cluster/kube" kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$kube_ldflags"
build_one "$tools/cluster/kube" kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$kube_ldflags"
build_one "$tools/cluster/kube" kubectl k8s.io/kubernetes/cmd/kubectl "$kube_ldflags"
build_one "$tools/cluster/kube" kubelet k8s.io/kubernetes/cmd/kubelet "$kube_ldflags"
cache_done "$BIN" "$stamp"
log "built Kubernetes $KUBE_VERSION and etcd $ETCD_VERSION in $((SECONDS - total))s into $BIN"
echo "$BIN"
