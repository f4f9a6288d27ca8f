#!/usr/bin/env bash
# Stops a containerd started by tools/containerd-up.sh and removes everything
# it left behind, whatever state the tests left it in (pods still running, a
# test binary killed by its timeout):
#
#   tools/containerd-down.sh DIR
#   tools/containerd-down.sh unix:///DIR/containerd.sock
#
# In order: containerd itself (TERM, KILL after 5s); every runc container in
# DIR/runc (`runc delete --force`: kills its processes, removes its
# cgroups); the shims of that containerd, runc and CNI plugin processes
# working for it, and everything under them (KILL); every mount under DIR
# (rootfs, sandbox /dev/shm, network namespaces); cgroups and shim sockets
# (/run/containerd/s) named by its container IDs; its CNI bridge and the
# ipMasq NAT rules of its network; the empty /k8s.io parent cgroups and
# IPv4 forwarding, if no other containerd or dockerd runs and forwarding was
# off before; last DIR. Processes are picked by what names this instance
# (its config, socket, runc root, or netns paths in a CNI plugin's
# environment), never by name alone. Idempotent: a missing DIR is success.
set -euo pipefail

TOOL=containerd-down
# shellcheck source=tools/containerd-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/containerd-lib.sh"

[[ $# -eq 1 && -n "$1" ]] || die "usage: containerd-down.sh DIR|unix:///DIR/containerd.sock"
DIR="$(instance_dir "$1")"
if [[ ! -d "$DIR" ]]; then
  log "$DIR does not exist: nothing to do"
  exit 0
fi
DIR="$(cd "$DIR" && pwd -P)"
[[ "$DIR" != / ]] || die "refusing to work on /"
[[ $(id -u) -eq 0 ]] || die "must run as root"

env_file="$DIR/podlife-containerd.env"
if [[ ! -f "$env_file" ]]; then
  if [[ -z "$(ls -A "$DIR")" ]]; then
    rmdir "$DIR"
    log "removed empty $DIR"
    exit 0
  fi
  die "$DIR has no podlife-containerd.env: not a tools/containerd-up.sh directory, not touching it"
fi
# getenv KEY: the value of KEY in podlife-containerd.env (not sourced: plain
# KEY=VALUE lines).
getenv() { sed -n "s/^$1=//p" "$env_file" | tail -n 1; }
SOCK="$(getenv SOCK)"
SOCK="${SOCK:-$DIR/containerd.sock}"
BRIDGE="$(getenv BRIDGE)"
CNI_NET="$(getenv CNI_NET)"
CNI_BIN_DIR="$(getenv CNI_BIN_DIR)"
CNI_BIN_DIR="${CNI_BIN_DIR:-/usr/lib/cni}"

# cmdline PID: the process's command line, each argument followed by a
# space. (Builtins only: these scans run over every process, several times.)
cmdline() {
  local argv=()
  { mapfile -d '' -t argv <"/proc/$1/cmdline"; } 2>/dev/null || return 0
  [[ ${#argv[@]} -eq 0 ]] || printf '%s ' "${argv[@]}"
}

# containerd_pids: containerd processes running this DIR's config.
containerd_pids() {
  local p
  for p in /proc/[0-9]*; do
    p="${p#/proc/}"
    case "$(cmdline "$p")" in
      *containerd\ --config\ "$DIR/config.toml "*) echo "$p" ;;
    esac
  done
}

# our_pids: runc v2 shims started by this DIR's containerd, runc processes
# working on its runc state, and CNI plugins working on its network
# namespaces (CNI_NETNS under DIR; containerd may have died mid-call).
our_pids() {
  local p env
  for p in /proc/[0-9]*; do
    p="${p#/proc/}"
    case "$(cmdline "$p")" in
      *containerd-shim*"-address $SOCK "* | *runc*"--root $DIR/runc/"*) echo "$p" ;;
      "$CNI_BIN_DIR"/*)
        env=()
        { mapfile -d '' -t env <"/proc/$p/environ"; } 2>/dev/null || continue
        if printf '%s\n' "${env[@]}" | grep -q "^CNI_NETNS=$DIR/"; then echo "$p"; fi
        ;;
    esac
  done
}

# descendants PID...: all descendants of the PIDs (not the PIDs themselves).
descendants() {
  local -A children=()
  local p stat rest ppid
  for p in /proc/[0-9]*; do
    p="${p#/proc/}"
    { read -r stat <"/proc/$p/stat"; } 2>/dev/null || continue
    rest="${stat##*) }" # after "(comm) "; comm may hold spaces and parens
    rest="${rest#* }"   # after the state
    ppid="${rest%% *}"
    children[$ppid]+=" $p"
  done
  local queue=("$@") out=()
  while [[ ${#queue[@]} -gt 0 ]]; do
    p="${queue[0]}"
    queue=("${queue[@]:1}")
    for c in ${children[$p]:-}; do
      out+=("$c")
      queue+=("$c")
    done
  done
  [[ ${#out[@]} -eq 0 ]] || printf '%s\n' "${out[@]}"
}

# alive PID: whether the process exists and is not a zombie (a zombie is
# dead; reaping it is its parent's business, here often init's).
alive() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat="${stat##*) }"
  [[ "${stat:0:1}" != Z ]]
}

# wait_gone SECONDS PID...: waits until none of the PIDs is alive; 1 if
# some still are.
wait_gone() {
  local deadline=$((SECONDS + $1)) p alive
  shift
  while :; do
    alive=0
    for p in "$@"; do
      if alive "$p"; then alive=1; fi
    done
    [[ $alive -eq 1 ]] || return 0
    [[ $SECONDS -lt $deadline ]] || return 1
    sleep 0.1
  done
}

# --- containerd ---------------------------------------------------------------
mapfile -t pids < <(
  pidfile="$(cat "$DIR/containerd.pid" 2>/dev/null || true)"
  # The pid file only if that pid still is our containerd (not reused).
  if [[ -n "$pidfile" && "$(cmdline "$pidfile")" == *"containerd --config $DIR/config.toml "* ]]; then
    echo "$pidfile"
  fi
  containerd_pids
)
mapfile -t pids < <(printf '%s\n' "${pids[@]}" | sort -u | sed '/^$/d')
if [[ ${#pids[@]} -gt 0 ]]; then
  log "stopping containerd (pid ${pids[*]})"
  kill -TERM "${pids[@]}" 2>/dev/null || true
  if ! wait_gone 5 "${pids[@]}"; then
    log "containerd did not exit within 5s of SIGTERM: SIGKILL"
    kill -KILL "${pids[@]}" 2>/dev/null || true
    wait_gone 5 "${pids[@]}" || die "containerd (pid ${pids[*]}) survived SIGKILL"
  fi
fi

# --- containers -------------------------------------------------------------
# The runc v2 shim keeps runc's state in DIR/runc/NAMESPACE (the runtime's
# Root option). `runc delete --force` kills a container's processes and
# removes its cgroups, which killing the processes alone would leave behind.
if [[ -d "$DIR/runc" ]]; then
  for root in "$DIR"/runc/*/; do
    [[ -d "$root" ]] || continue
    for state in "$root"*/state.json; do
      [[ -f "$state" ]] || continue
      id="$(basename "$(dirname "$state")")"
      log "removing leftover container $id"
      runc --root "${root%/}" delete --force "$id" >&2 || log "runc delete --force $id failed"
    done
  done
fi

# --- shims ------------------------------------------------------------------
# Shims of this containerd, runc processes on its state, and everything
# under them, KILLed until a scan finds none: a shim still starting when
# containerd died can spawn its daemon or a runc after a scan.
for round in 1 2 3 4 5 6 7 8 9 10; do
  mapfile -t ours < <(our_pids)
  [[ ${#ours[@]} -gt 0 ]] || break
  [[ $round -lt 10 ]] || die "processes keep appearing: ${ours[*]}"
  mapfile -t rest < <(descendants "${ours[@]}")
  log "killing ${#ours[@]} shim/runc process(es) and ${#rest[@]} process(es) under them"
  kill -KILL "${rest[@]}" "${ours[@]}" 2>/dev/null || true
  wait_gone 5 "${rest[@]}" "${ours[@]}" || die "processes survived SIGKILL: ${rest[*]} ${ours[*]}"
done

# --- mounts -----------------------------------------------------------------
# Rootfs, sandbox /dev/shm and network namespaces, deepest first; not DIR
# itself, should it be a mount point. (mountinfo would escape blanks and
# backslashes as \ooo; paths under DIR have none.)
mounts_under_dir() {
  awk -v d="$DIR" 'index($5, d "/") == 1 { print length($5) "\t" $5 }' /proc/self/mountinfo |
    sort -rn | cut -f2-
}
for _ in 1 2 3; do
  mapfile -t mounts < <(mounts_under_dir)
  [[ ${#mounts[@]} -gt 0 ]] || break
  log "unmounting ${#mounts[@]} mount(s) under $DIR"
  for m in "${mounts[@]}"; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
  done
done
mapfile -t mounts < <(mounts_under_dir)
[[ ${#mounts[@]} -eq 0 ]] || die "still mounted under $DIR, not removing it: ${mounts[*]}"

# --- cgroups and shim sockets --------------------------------------------------
# This instance's container and sandbox IDs: from runc's, the shims' and the
# CRI plugin's state, and from the host-local IPAM files (one per pod IP,
# holding the sandbox ID), as a sandbox whose network setup was cut short
# has nothing else yet.
mapfile -t ids < <(
  {
    for d in "$DIR"/runc/*/* "$DIR"/state/io.containerd.runtime.v2.task/*/* \
      "$DIR"/root/io.containerd.grpc.v1.cri/containers/* "$DIR"/root/io.containerd.grpc.v1.cri/sandboxes/*; do
      if [[ -d "$d" ]]; then basename "$d"; fi
    done
    for f in "$DIR"/cni/ipam/*/*; do
      if [[ -f "$f" ]]; then head -n 1 "$f" | tr -d '\r'; fi
    done
  } | grep -xE '[0-9a-f]{64}' | sort -u
)
# containerd 1.6 puts a shim's socket at /run/containerd/s/sha256(ADDRESS/NAMESPACE/ID),
# outside DIR (ID: the sandbox's, one shim per pod); a shim removes it only
# when it exits normally.
for id in "${ids[@]}"; do
  for ns in "$DIR"/runc/* "$DIR"/state/io.containerd.runtime.v2.task/*; do
    [[ -d "$ns" ]] || continue
    rm -f "/run/containerd/s/$(printf '%s' "$SOCK/$(basename "$ns")/$id" | sha256sum | cut -d' ' -f1)"
  done
done
# `runc delete` above removed the cgroups of the containers runc knew; a
# container whose creation was cut short (containerd killed mid-way) can
# leave an empty one without runc state. Every cgroup named by one of the
# IDs goes (64 random hex digits: nothing else has those names; rmdir only
# removes an empty cgroup).
if [[ ${#ids[@]} -gt 0 && -d /sys/fs/cgroup ]]; then
  names=()
  for id in "${ids[@]}"; do
    names+=(-o -name "$id")
  done
  mapfile -t cgroups < <(find /sys/fs/cgroup -mindepth 1 -type d \( "${names[@]:1}" \) 2>/dev/null |
    awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f2-)
  for cg in "${cgroups[@]}"; do
    log "removing leftover cgroup $cg"
    rmdir "$cg" 2>/dev/null || log "cannot remove cgroup $cg (processes left in it?)"
  done
fi

# --- network ----------------------------------------------------------------
ipcmd() {
  if command -v ip >/dev/null; then ip "$@"; else "${BUSYBOX:-/bin/busybox}" ip "$@"; fi
}
if [[ -n "$BRIDGE" ]] && ipcmd link show "$BRIDGE" >/dev/null 2>&1; then
  log "deleting bridge $BRIDGE"
  ipcmd link delete "$BRIDGE" || log "cannot delete bridge $BRIDGE"
fi
# The bridge plugin's ipMasq rules are removed by CNI DEL, which a killed
# pod never got: a POSTROUTING rule per pod IP, jumping to chain
# CNI-<first 24 hex digits of sha512(NETWORK NAME + SANDBOX ID)> (the
# plugins' utils.FormatChainName), all commented `name: "CNI_NET" id: "ID"`.
# Chains are found both ways: by ID (also the empty one of an ADD cut
# short) and by comment (also for IDs not known here).
if [[ -n "$CNI_NET" ]] && command -v iptables >/dev/null &&
  iptables -w 5 -t nat -S POSTROUTING >/dev/null 2>&1; then
  declare -A chains=()
  for id in "${ids[@]}"; do
    chains["CNI-$(printf '%s' "$CNI_NET$id" | sha512sum | cut -c1-24)"]=1
  done
  while read -r _ chain _; do
    chains[$chain]=1
  done < <(iptables -w 5 -t nat -L POSTROUTING -n 2>/dev/null | grep -F "name: \"$CNI_NET\" ")
  existing="$(iptables -w 5 -t nat -S 2>/dev/null | awk '$1 == "-N" { print $2 }')"
  for chain in "${!chains[@]}"; do
    [[ "$chain" == CNI-* ]] || continue
    grep -qxF "$chain" <<<"$existing" || continue
    log "deleting leftover ipMasq chain $chain"
    # Rules jumping to it, by number, highest first.
    iptables -w 5 -t nat -L POSTROUTING -n --line-numbers 2>/dev/null |
      awk -v c="$chain" '$2 == c { print $1 }' | sort -rn |
      while read -r num; do iptables -w 5 -t nat -D POSTROUTING "$num"; done
    iptables -w 5 -t nat -F "$chain" || true
    iptables -w 5 -t nat -X "$chain" || log "cannot delete chain $chain"
  done
fi

# --- host state shared with other runtimes --------------------------------------
# running NAME...: whether a live process with one of these names runs.
running() {
  local p comm n
  for p in /proc/[0-9]*; do
    { read -r comm <"$p/comm"; } 2>/dev/null || continue
    for n in "$@"; do
      if [[ "$comm" == "$n" ]] && alive "${p#/proc/}"; then return 0; fi
    done
  done
  return 1
}
# Only when no other containerd (or dockerd) runs, which might use them: the
# empty per-namespace parent cgroups runc leaves (/k8s.io in each hierarchy;
# rmdir fails on a cgroup in use), /run/containerd/s if empty, and IPv4
# forwarding if it was off before.
if ! running containerd dockerd; then
  for cg in /sys/fs/cgroup/k8s.io /sys/fs/cgroup/*/k8s.io; do
    if [[ -d "$cg" ]]; then rmdir "$cg" 2>/dev/null || true; fi
  done
  # The shims' socket directory, if empty (rmdir again).
  rmdir /run/containerd/s /run/containerd 2>/dev/null || true
  other_bridges=(/sys/class/net/podlife*/bridge)
  if [[ "$(getenv IP_FORWARD)" == 0 && "$(cat /proc/sys/net/ipv4/ip_forward)" == 1 && ! -e "${other_bridges[0]}" ]]; then
    log "turning IPv4 forwarding back off"
    echo 0 >/proc/sys/net/ipv4/ip_forward || true
  fi
fi

# --- the directory ------------------------------------------------------------
rm -rf --one-file-system "$DIR"
log "removed $DIR"
