# shellcheck shell=bash
# Stopping the processes a tool started, by PID (cluster-down.sh,
# metrics-server-down.sh). A PID is signalled only while its command line
# still names the tool's state directory, so a reused PID is never hit.
# Sourced; the caller defines log and die.

# owned_by DIR PID: whether process PID runs with a path under DIR on its
# command line.
owned_by() {
  local argv=()
  { mapfile -d '' -t argv <"/proc/$2/cmdline"; } 2>/dev/null || return 1
  [[ " ${argv[*]} " == *"$1/"* ]]
}

# gone_within DIR PID TENTHS: whether process PID no longer runs as DIR's
# within TENTHS tenths of a second.
gone_within() {
  local i
  for ((i = 0; i < $3; i++)); do
    owned_by "$1" "$2" || return 0
    sleep 0.1
  done
  ! owned_by "$1" "$2"
}

# stop_owned NAME DIR PID: TERM process PID (NAME, in logs) if DIR owns it,
# and KILL it if it outlives 10s; dies if it survives KILL.
stop_owned() {
  local name="$1" dir="$2" pid="$3"
  if ! [[ "$pid" =~ ^[0-9]+$ ]] || ! owned_by "$dir" "$pid"; then
    return 0
  fi
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  gone_within "$dir" "$pid" 100 && return 0
  log "$name (pid $pid) ignored TERM for 10s: killing it"
  kill -KILL "$pid" 2>/dev/null || true
  gone_within "$dir" "$pid" 50 || die "$name (pid $pid) survived KILL"
}
