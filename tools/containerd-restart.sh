#!/usr/bin/env bash
# Restarts a containerd started by tools/containerd-up.sh, as a runtime
# upgrade or crash-restart on a node would: the containerd process stops
# (SIGTERM) and starts again with the same configuration, while the shims,
# and so the sandboxes and containers, keep running. CRI calls in flight
# when it stops fail; tests use that to check that a runtime error during a
# pod's termination is retried.
#
#   tools/containerd-restart.sh DIR
#   tools/containerd-restart.sh unix:///DIR/containerd.sock
#
# containerd is stopped by the PID in DIR/containerd.pid (only if that
# process runs DIR's config; if none runs, it is just started), then started
# as containerd-up.sh starts it: the same binaries, setsid, DIR/config.toml,
# the log level the old process had (else $PODLIFE_CONTAINERD_LOG_LEVEL, else
# info), log appended to DIR/containerd.log. DIR/containerd.pid and the PID=
# line of DIR/podlife-containerd.env then name the new process, so that
# tools/containerd-down.sh stops it. Returns once containerd answers on its
# socket (ctr version) and, at log levels that show it, its CRI plugin has
# finished starting. Needs root.
set -euo pipefail

TOOL=containerd-restart
# shellcheck source=tools/containerd-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/containerd-lib.sh"

[[ $# -eq 1 && -n "$1" ]] || die "usage: containerd-restart.sh DIR|unix:///DIR/containerd.sock"
DIR="$(instance_dir "$1")"
[[ -d "$DIR" ]] || die "$DIR does not exist"
DIR="$(cd "$DIR" && pwd -P)"
[[ $(id -u) -eq 0 ]] || die "must run as root"
env_file="$DIR/podlife-containerd.env"
[[ -f "$env_file" && -f "$DIR/config.toml" ]] ||
  die "$DIR has no podlife-containerd.env or config.toml: not a tools/containerd-up.sh directory"
getenv() { sed -n "s/^$1=//p" "$env_file" | tail -n 1; }
SOCK="$(getenv SOCK)"
SOCK="${SOCK:-$DIR/containerd.sock}"
# The binaries containerd-up.sh started (PODLIFE_CONTAINERD_BIN), if not PATH's.
bin="$(getenv CONTAINERD_BIN)"
[[ -z "$bin" ]] || export PATH="$bin:$PATH"

# cmdline PID: the process's command line, each argument followed by a space.
cmdline() {
  local argv=()
  { mapfile -d '' -t argv <"/proc/$1/cmdline"; } 2>/dev/null || return 0
  [[ ${#argv[@]} -eq 0 ]] || printf '%s ' "${argv[@]}"
}

# alive PID: whether the process exists and is not a zombie.
alive() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat="${stat##*) }"
  [[ "${stat:0:1}" != Z ]]
}

# --- stop ---------------------------------------------------------------------
level="${PODLIFE_CONTAINERD_LOG_LEVEL:-info}"
old="$(cat "$DIR/containerd.pid" 2>/dev/null || true)"
old_cmd=""
if [[ "$old" =~ ^[0-9]+$ ]] && alive "$old"; then
  old_cmd="$(cmdline "$old")"
fi
if [[ "$old_cmd" == *"containerd --config $DIR/config.toml "* ]]; then
  # Keep the old process's log level.
  if [[ "$old_cmd" =~ --log-level\ ([^ ]+)\  ]]; then
    level="${BASH_REMATCH[1]}"
  fi
  log "stopping containerd (pid $old)"
  kill -TERM "$old" 2>/dev/null || true
  deadline=$((SECONDS + 10))
  while alive "$old"; do
    if [[ $SECONDS -ge $deadline ]]; then
      log "containerd did not exit within 10s of SIGTERM: SIGKILL"
      kill -KILL "$old" 2>/dev/null || true
      deadline=$((SECONDS + 5))
      while alive "$old"; do
        [[ $SECONDS -lt $deadline ]] || die "containerd (pid $old) survived SIGKILL"
        sleep 0.1
      done
      break
    fi
    sleep 0.05
  done
else
  log "no containerd of $DIR runs (pid file: ${old:-none}); starting it"
  old=""
fi

# --- start, as containerd-up.sh does ------------------------------------------
# The CRI plugin's readiness is looked for only in what this start logs.
offset="$(stat -c %s "$DIR/containerd.log" 2>/dev/null || echo 0)"
setsid containerd --config "$DIR/config.toml" --log-level "$level" \
  </dev/null >>"$DIR/containerd.log" 2>&1 &
pid=$!
echo "$pid" >"$DIR/containerd.pid"
if grep -q '^PID=' "$env_file"; then
  sed -i "s/^PID=.*/PID=$pid/" "$env_file"
else
  echo "PID=$pid" >>"$env_file"
fi

ctr=(ctr --address "$SOCK")
deadline=$((SECONDS + 30))
until "${ctr[@]}" version >/dev/null 2>&1; do
  alive "$pid" || die "containerd exited during startup (see $DIR/containerd.log)"
  [[ $SECONDS -lt $deadline ]] || die "containerd did not answer on $SOCK within 30s"
  sleep 0.05
done
# The CRI plugin answers "server is not initialized yet" until it recovered
# its sandboxes and containers; it logs "Start streaming server" (level
# info) just before it serves.
case "$level" in
  trace | debug | info)
    until tail -c "+$((offset + 1))" "$DIR/containerd.log" | grep -q 'msg="Start streaming server"'; do
      alive "$pid" || die "containerd exited during startup (see $DIR/containerd.log)"
      [[ $SECONDS -lt $deadline ]] || die "the CRI plugin did not start within 30s (see $DIR/containerd.log)"
      sleep 0.05
    done
    ;;
esac
log "restarted: pid $pid (was ${old:-none})"
