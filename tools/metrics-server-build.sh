#!/usr/bin/env bash
# Builds metrics-server (sigs.k8s.io/metrics-server) from the Go module proxy
# and prints the directory that holds the binary as the last line of stdout:
#
#   BIN=$(tools/metrics-server-build.sh | tail -1)
#
# It is built through the wrapper module tools/metrics-server (go.mod and
# go.sum only, a `tool` line naming cmd/metrics-server): metrics-server's own
# go.mod replaces nothing, so the wrapper pins exactly what it requires. To
# bump: `go get -tool sigs.k8s.io/metrics-server/cmd/metrics-server@vX` in
# tools/metrics-server.
#
# The binary goes to $CACHE/metrics-server-<version>/bin, where CACHE is
# $PODLIFE_CLUSTER_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/podlife/cluster,
# beside the control plane's. A stamp file records what built it (the wrapper
# go.mod and go.sum, the Go version, the link flags); when it matches, the
# script builds nothing. Diagnostics go to stderr.
set -euo pipefail

tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOL=metrics-server-build
log() { echo "$TOOL: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

command -v go >/dev/null || die "go is not on PATH"
mod="$tools/metrics-server"
# shellcheck source=tools/build-cache.sh
source "$tools/build-cache.sh"
VERSION="$(mod_version "$mod/go.mod" sigs.k8s.io/metrics-server)"
[[ -n "$VERSION" ]] || die "cannot read the version of sigs.k8s.io/metrics-server from $mod/go.mod"

CACHE="${PODLIFE_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podlife/cluster}"
BIN="$CACHE/metrics-server-$VERSION/bin"
# metrics-server reports its version through client-go's, as its Makefile
# sets it (VERSION_LDFLAGS).
ldflags="-s -w -X k8s.io/client-go/pkg/version.gitVersion=$VERSION"
stamp="$(
  go version
  echo "$ldflags"
  cat "$mod/go.mod" "$mod/go.sum" | sha256sum
)"

if cache_up_to_date "$BIN" "$stamp" metrics-server; then
  log "up to date: metrics-server $VERSION in $BIN"
  echo "$BIN"
  exit 0
fi
cache_begin "$BIN"
t0=$SECONDS
log "building metrics-server $VERSION"
(cd "$mod" && CGO_ENABLED=0 GOFLAGS=-mod=readonly GOWORK=off \
  go build -ldflags="$ldflags" -o "$BIN/metrics-server.tmp" sigs.k8s.io/metrics-server/cmd/metrics-server) ||
  die "building sigs.k8s.io/metrics-server/cmd/metrics-server failed"
mv "$BIN/metrics-server.tmp" "$BIN/metrics-server"
cache_done "$BIN" "$stamp"
log "built metrics-server $VERSION in $((SECONDS - t0))s into $BIN"
echo "$BIN"
