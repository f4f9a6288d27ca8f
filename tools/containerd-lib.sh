# shellcheck shell=bash
# Sourced by the containerd-*.sh tools after they set $TOOL: logging, and the
# instance directory named by an argument that is the directory itself, its
# socket path, or a unix:// endpoint.

export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
log() { echo "$TOOL: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

# instance_dir prints the directory of the instance that $1 names.
instance_dir() {
  local arg="$1"
  if [[ "$arg" == unix://* ]]; then
    dirname "${arg#unix://}"
  elif [[ "$arg" == *.sock ]]; then
    dirname "$arg"
  else
    echo "$arg"
  fi
}
