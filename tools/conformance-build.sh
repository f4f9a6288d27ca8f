#!/usr/bin/env bash
# Builds what tools/conformance.sh runs, from the Go module proxy, and prints
# the directory that holds the binaries as the last line of stdout:
#
#   BIN=$(tools/conformance-build.sh | tail -1)
#   BIN=$(tools/conformance-build.sh --kubelet | tail -1)   # and the kubelet
#   BIN=$(tools/conformance-build.sh --e2e-node | tail -1)  # and e2e_node.test
#
# From k8s.io/kubernetes (the wrapper module tools/conformance/e2e, which pins
# the staging modules as tools/cluster/kube does):
#   e2e.test  go test -c k8s.io/kubernetes/test/e2e (the upstream e2e suite)
#   agnhost   k8s.io/kubernetes/test/images/agnhost (the test images' program),
#             with localhost.crt and localhost.key (its porter's, for the image)
#   nnp       k8s.io/kubernetes/test/images/nonewprivs (the nonewprivs image's)
#   kubelet   k8s.io/kubernetes/cmd/kubelet (only with --kubelet: the
#             reference node of tools/conformance.sh --node kubelet)
#   e2e_node.test  go test -c k8s.io/kubernetes/test/e2e_node (only with
#             --e2e-node: the node e2e suite of tools/conformance.sh --suite
#             node; its test dependencies are why go.sum lists etcd's server)
# and from github.com/onsi/ginkgo/v2, at the version k8s.io/kubernetes
# requires (the same module the suite links, so CLI and suite agree):
#   ginkgo    the CLI that runs e2e.test in parallel (ginkgo -p)
#
# All are static (CGO_ENABLED=0), so agnhost can go into an image without a
# libc. The Kubernetes version is set at link time as cluster-build.sh does.
# The binaries go to $CACHE/kube-<version>/bin, where CACHE is
# $PODLIFE_CONFORMANCE_CACHE, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/podlife/conformance. A stamp records what
# built them (tools/build-cache.sh); when it matches and every binary asked
# for exists, nothing is built. Diagnostics go to stderr.
set -euo pipefail

tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$tools")"
TOOL=conformance-build
log() { echo "$TOOL: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

want_kubelet=false want_e2e_node=false
for arg in "$@"; do
  case "$arg" in
    --kubelet) want_kubelet=true ;;
    --e2e-node) want_e2e_node=true ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *) die "unknown argument $arg (want: --kubelet, --e2e-node)" ;;
  esac
done

command -v go >/dev/null || die "go is not on PATH"
mod="$tools/conformance/e2e"

# shellcheck source=tools/build-cache.sh
source "$tools/build-cache.sh"

KUBE_VERSION="$(mod_version "$mod/go.mod" k8s.io/kubernetes)"
GINKGO_VERSION="$(mod_version "$mod/go.mod" github.com/onsi/ginkgo/v2)"
API_VERSION="$(mod_version "$repo/go.mod" k8s.io/api)"
CLUSTER_KUBE_VERSION="$(mod_version "$tools/cluster/kube/go.mod" k8s.io/kubernetes)"
[[ -n "$KUBE_VERSION" && -n "$GINKGO_VERSION" && -n "$API_VERSION" ]] ||
  die "cannot read the versions from tools/conformance/e2e/go.mod and go.mod"
# The suite must test the control plane it runs against: the same release.
[[ "$KUBE_VERSION" == "$CLUSTER_KUBE_VERSION" ]] ||
  die "tools/conformance/e2e/go.mod pins k8s.io/kubernetes $KUBE_VERSION but tools/cluster/kube/go.mod $CLUSTER_KUBE_VERSION: they must match"
# The ginkgo CLI must be the version the suite links (ginkgo refuses a
# mismatched suite with a warning and odd failures otherwise).
kube_ginkgo="$(cd "$mod" && GOWORK=off GOFLAGS=-mod=readonly go list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2)"
[[ "$kube_ginkgo" == "$GINKGO_VERSION" ]] ||
  die "ginkgo: go.mod requires $GINKGO_VERSION but the build selects $kube_ginkgo"
check_kube_minor "$KUBE_VERSION" "$API_VERSION" tools/conformance/e2e/go.mod

CACHE="${PODLIFE_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podlife/conformance}"
BIN="$CACHE/kube-$KUBE_VERSION/bin"

# As cluster-build.sh: the version the binaries report.
kube_ldflags="$(kube_link_flags "$KUBE_VERSION")"

stamp="$(
  go version
  echo "$kube_ldflags"
  cat "$mod/go.mod" "$mod/go.sum" | sha256sum
)"
binaries=(e2e.test ginkgo agnhost nnp)
! $want_kubelet || binaries+=(kubelet)
! $want_e2e_node || binaries+=(e2e_node.test)

if cache_up_to_date "$BIN" "$stamp" "${binaries[@]}"; then
  log "up to date: ${binaries[*]} of Kubernetes $KUBE_VERSION in $BIN"
  echo "$BIN"
  exit 0
fi

# A stale stamp means every binary is rebuilt (the Go build cache makes the
# unchanged ones a relink); a missing kubelet or e2e_node.test alone is
# built on its own.
if [[ -f "$BIN/.stamp" && "$(cat "$BIN/.stamp")" == "$stamp" ]]; then
  todo=()
  for b in "${binaries[@]}"; do
    [[ -x "$BIN/$b" ]] || todo+=("$b")
  done
else
  todo=("${binaries[@]}")
fi
cache_begin "$BIN"

# build_one OUT: builds binary OUT in the wrapper module.
build_one() {
  local out="$1" t0=$SECONDS cmd
  case "$out" in
    e2e.test) cmd=(go test -c -ldflags="$kube_ldflags" -o "$BIN/$out.tmp" k8s.io/kubernetes/test/e2e) ;;
    e2e_node.test) cmd=(go test -c -ldflags="$kube_ldflags" -o "$BIN/$out.tmp" k8s.io/kubernetes/test/e2e_node) ;;
    agnhost) cmd=(go build -ldflags="$kube_ldflags" -o "$BIN/$out.tmp" k8s.io/kubernetes/test/images/agnhost) ;;
    nnp) cmd=(go build -ldflags="-s -w" -o "$BIN/$out.tmp" k8s.io/kubernetes/test/images/nonewprivs) ;;
    kubelet) cmd=(go build -ldflags="$kube_ldflags" -o "$BIN/$out.tmp" k8s.io/kubernetes/cmd/kubelet) ;;
    ginkgo) cmd=(go build -ldflags="-s -w" -o "$BIN/$out.tmp" github.com/onsi/ginkgo/v2/ginkgo) ;;
    *) die "no recipe for $out" ;;
  esac
  log "building $out: ${cmd[*]}"
  (cd "$mod" && CGO_ENABLED=0 GOFLAGS=-mod=readonly GOWORK=off "${cmd[@]}") ||
    die "building $out failed"
  mv "$BIN/$out.tmp" "$BIN/$out"
  if [[ "$out" == agnhost ]]; then
    local src
    src="$(cd "$mod" && GOWORK=off GOFLAGS=-mod=readonly go list -m -f '{{.Dir}}' k8s.io/kubernetes)/test/images/agnhost/porter"
    install -m 0644 "$src/localhost.crt" "$src/localhost.key" "$BIN/"
  fi
  log "built $out in $((SECONDS - t0))s"
}
total=$SECONDS
for b in "${todo[@]}"; do
  build_one "$b"
done
cache_done "$BIN" "$stamp"
log "built ${todo[*]} (Kubernetes $KUBE_VERSION, ginkgo $GINKGO_VERSION) in $((SECONDS - total))s into $BIN"
echo "$BIN"
