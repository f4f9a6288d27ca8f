# shellcheck shell=bash
# Sourced by the tools that build binaries through the Go module proxy
# (cluster-build.sh, containerd-build.sh): a build directory is up to date
# when its stamp file says what built it and every binary is there.

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
