# shellcheck shell=bash
# Sourced by the tools that build binaries through the Go module proxy
# (cluster-build.sh, conformance-build.sh, containerd-build.sh,
# metrics-server-build.sh): the versions their wrapper modules pin, the link
# flags of a Kubernetes binary, and whether a build directory is up to date
# (its stamp file says what built it and every binary is there).

# mod_version GOMOD MODULE: the version that go.mod file GOMOD requires of
# MODULE (a require line, or a line of a require block); empty if none.
mod_version() {
  awk -v m="$2" '$1 == "require" && $2 == m { print $3; exit } $1 == m && $2 ~ /^v/ { print $2; exit }' "$1"
}

# kube_link_flags VERSION: the link flags that make a Kubernetes binary of
# release VERSION (v1.X.Y) report it, as Kubernetes' own build sets them
# (hack/lib/version.sh), stripped of symbols.
kube_link_flags() {
  local minor pkg flags="-s -w"
  minor="$(cut -d. -f2 <<<"$1")"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$1 -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  echo "$flags"
}

# check_kube_minor KUBE_VERSION API_VERSION WRAPPER: dies unless the
# Kubernetes release that wrapper module WRAPPER pins (v1.X.Z) is the one
# the project's k8s.io/api (v0.X.Y) goes with.
check_kube_minor() {
  local kube_minor api_minor
  kube_minor="$(cut -d. -f2 <<<"$1")"
  api_minor="$(cut -d. -f2 <<<"$2")"
  [[ "$api_minor" == "$kube_minor" ]] ||
    die "$3 pins k8s.io/kubernetes $1 but go.mod has k8s.io/api $2: the minors must match (v1.$api_minor.z)"
}

# cache_up_to_date DIR STAMP BINARY...: whether DIR/.stamp holds STAMP and
# every BINARY is an executable in DIR.
cache_up_to_date() {
  local dir="$1" stamp="$2" b
  shift 2
  [[ -f "$dir/.stamp" && "$(cat "$dir/.stamp")" == "$stamp" ]] || return 1
  for b in "$@"; do
    [[ -x "$dir/$b" ]] || return 1
  done
}

# cache_begin DIR: DIR exists and is not up to date until cache_done.
cache_begin() {
  mkdir -p "$1"
  rm -f "$1/.stamp"
}

# cache_done DIR STAMP: DIR's binaries are what STAMP says built them.
cache_done() {
  echo "$2" >"$1/.stamp"
}
