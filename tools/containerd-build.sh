#!/usr/bin/env bash
# Builds a current containerd (containerd, containerd-shim-runc-v2, ctr) from
# the Go module proxy and prints the directory that holds the binaries as the
# last line of stdout:
#
#   BIN=$(tools/containerd-build.sh | tail -1)
#   ENDPOINT=$(PODLIFE_CONTAINERD_BIN=$BIN tools/containerd-up.sh | tail -1)
#
# Debian's containerd (1.6) is the runtime of the tests; this one is the
# runtime a current node has, with what 1.6 lacks (lifecycle.stopSignal is
# honoured from containerd 2.3 on). The version is the one the wrapper
# module tools/containerd/go.mod requires; runc stays Debian's.
#
# The binaries go to $CACHE/containerd-<version>/bin, where CACHE is
# $PODLIFE_CONTAINERD_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/podlife.
# A stamp file there records what built them (the wrapper's go.mod and
# go.sum, the Go version, the tags); when it matches and every binary exists,
# the script builds nothing. Diagnostics go to stderr.
set -euo pipefail

tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOL=containerd-build
# shellcheck source=tools/containerd-lib.sh
source "$tools/containerd-lib.sh"
# shellcheck source=tools/build-cache.sh
source "$tools/build-cache.sh"

command -v go >/dev/null || die "go is not on PATH"
module=github.com/containerd/containerd/v2
VERSION="$(mod_version "$tools/containerd/go.mod" "$module")"
[[ -n "$VERSION" ]] || die "tools/containerd/go.mod requires no $module"

CACHE="${PODLIFE_CONTAINERD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podlife}"
BIN="$CACHE/containerd-$VERSION/bin"
# The snapshotters that need C libraries or kernel features the tests do not
# use are left out (containerd-up.sh disables them in its config too).
TAGS=no_btrfs,no_devmapper,no_zfs
LDFLAGS="-s -w -X $module/version.Version=$VERSION"
binaries=(containerd containerd-shim-runc-v2 ctr)

stamp="$(
  go version
  echo "$TAGS $LDFLAGS"
  cat "$tools/containerd/go.mod" "$tools/containerd/go.sum" | sha256sum
)"
if cache_up_to_date "$BIN" "$stamp" "${binaries[@]}"; then
  log "up to date: containerd $VERSION in $BIN"
  echo "$BIN"
  exit 0
fi

cache_begin "$BIN"
t0=$SECONDS
pkgs=()
for b in "${binaries[@]}"; do
  pkgs+=("$module/cmd/$b")
done
log "building containerd $VERSION (${binaries[*]})"
tmp="$(mktemp -d "$BIN/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
(cd "$tools/containerd" && GOFLAGS=-mod=readonly GOWORK=off \
  go build -tags "$TAGS" -ldflags "$LDFLAGS" -o "$tmp/" "${pkgs[@]}") ||
  die "building containerd $VERSION failed"
for b in "${binaries[@]}"; do
  mv "$tmp/$b" "$BIN/$b"
done
cache_done "$BIN" "$stamp"
log "built containerd $VERSION in $((SECONDS - t0))s into $BIN"
echo "$BIN"
