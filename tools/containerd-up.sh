#!/usr/bin/env bash
# Starts a private containerd with the CRI plugin for podlife's CRI
# integration tests, and prints its CRI endpoint as the last line of stdout:
#
#   ENDPOINT=$(tools/containerd-up.sh | tail -1)
#   PODLIFE_CRI_ENDPOINT=$ENDPOINT go test -race -count=1 ./cri/... ./internal/critest
#   tools/containerd-down.sh "$ENDPOINT"
#
# Everything it owns lives in one directory: $PODLIFE_CONTAINERD_DIR if set
# (created if missing; must not hold a running instance), else a new
# `mktemp -d`. In it: config.toml, containerd.sock, containerd.log,
# containerd.pid, root/ and state/ (containerd's), runc/ (runc's state),
# cni/ (network config and IPAM state) and podlife-containerd.env, which
# tools/containerd-down.sh reads. It does not use or touch a system
# containerd (/run/containerd/containerd.sock, /var/lib/containerd) except
# for the shim sockets, which containerd 1.6 always puts in
# /run/containerd/s/.
#
# No registry is reachable in CI, so the images are built locally from a
# static busybox (tools/busybox-image.sh) and imported into the k8s.io
# namespace, the one the CRI plugin uses:
#   localhost/podlife/busybox:latest  sh, sleep, ... (critest.BusyboxImage)
#   localhost/podlife/pause:latest    the sandbox image (critest.PauseImage)
#
# Needs root, containerd (with containerd-shim-runc-v2 and ctr), runc,
# busybox-static and containernetworking-plugins (Debian packages of those
# names). Diagnostics go to stderr.
#
# Environment:
#   PODLIFE_CONTAINERD_DIR          the directory (default: mktemp -d)
#   PODLIFE_CONTAINERD_SNAPSHOTTER  overlayfs or native (default: overlayfs
#                                   if an overlay mount works in DIR, else native)
#   PODLIFE_CONTAINERD_LOG_LEVEL    containerd's --log-level (default: info)
#   PODLIFE_CONTAINERD_KEEP=1       on failure, leave DIR and its log in place
#   PODLIFE_CONTAINERD_BIN          a directory whose containerd, ctr and
#                                   containerd-shim-runc-v2 are used instead of
#                                   those on PATH (tools/containerd-build.sh);
#                                   containerd-restart.sh uses it too
set -euo pipefail

start=$SECONDS
tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# runc, iptables and ip live in sbin (containerd-lib.sh adds them to PATH);
# containerd passes its PATH on to shims and CNI plugins.
TOOL=containerd-up
# shellcheck source=tools/containerd-lib.sh
source "$tools/containerd-lib.sh"
if [[ -n "${PODLIFE_CONTAINERD_BIN:-}" ]]; then
  [[ -x "$PODLIFE_CONTAINERD_BIN/containerd" ]] || die "PODLIFE_CONTAINERD_BIN=$PODLIFE_CONTAINERD_BIN has no containerd"
  PODLIFE_CONTAINERD_BIN="$(cd "$PODLIFE_CONTAINERD_BIN" && pwd -P)"
  # containerd finds its shim on the PATH it passes on.
  export PATH="$PODLIFE_CONTAINERD_BIN:$PATH"
fi

# Names shared with the Go side (internal/critest): keep them in sync.
BUSYBOX_IMAGE=localhost/podlife/busybox:latest
PAUSE_IMAGE=localhost/podlife/pause:latest
CNI_BIN_DIR=/usr/lib/cni

# --- preconditions -----------------------------------------------------------
[[ $(id -u) -eq 0 ]] || die "must run as root (containerd, runc, mounts and CNI need it); try: sudo $0"
missing=()
for cmd in containerd ctr containerd-shim-runc-v2; do
  command -v "$cmd" >/dev/null || missing+=("$cmd (Debian package: containerd)")
done
command -v runc >/dev/null || missing+=("runc (Debian package: runc)")
for plugin in bridge host-local loopback; do
  [[ -x "$CNI_BIN_DIR/$plugin" ]] || missing+=("$CNI_BIN_DIR/$plugin (Debian package: containernetworking-plugins)")
done
[[ -x "${BUSYBOX:-/bin/busybox}" ]] || missing+=("${BUSYBOX:-/bin/busybox} (Debian package: busybox-static)")
for cmd in mount umount tar sha256sum; do
  command -v "$cmd" >/dev/null || missing+=("$cmd")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  die "missing: $(printf '\n  %s' "${missing[@]}")"
fi
[[ -e /sys/fs/cgroup/cgroup.controllers || -d /sys/fs/cgroup/memory ]] ||
  die "no cgroup hierarchy mounted at /sys/fs/cgroup (runc needs cgroups v1 or v2)"
RUNC="$(command -v runc)"

# --- the directory -----------------------------------------------------------
if [[ -n "${PODLIFE_CONTAINERD_DIR:-}" ]]; then
  mkdir -p "$PODLIFE_CONTAINERD_DIR"
  DIR="$(cd "$PODLIFE_CONTAINERD_DIR" && pwd -P)"
  if [[ -f "$DIR/containerd.pid" ]] && kill -0 "$(cat "$DIR/containerd.pid")" 2>/dev/null; then
    die "a containerd already runs in $DIR (pid $(cat "$DIR/containerd.pid")); stop it with tools/containerd-down.sh $DIR"
  fi
  if [[ -n "$(ls -A "$DIR")" ]]; then
    die "$DIR is not empty; remove it with tools/containerd-down.sh $DIR or pick another PODLIFE_CONTAINERD_DIR"
  fi
else
  DIR="$(cd "$(mktemp -d "${TMPDIR:-/tmp}/podlife-containerd.XXXXXX")" && pwd -P)"
fi
SOCK="$DIR/containerd.sock"
# sun_path is 108 bytes; the ttrpc socket is SOCK.ttrpc.
[[ ${#SOCK} -le 100 ]] || die "socket path too long for a unix socket (${#SOCK} > 100 bytes): $SOCK"
chmod 0711 "$DIR"

ok=0
cleanup_on_failure() {
  [[ $ok -eq 0 ]] || return 0
  if [[ -s "$DIR/containerd.log" ]]; then
    log "last lines of $DIR/containerd.log:"
    tail -n 40 "$DIR/containerd.log" >&2 || true
  fi
  if [[ "${PODLIFE_CONTAINERD_KEEP:-}" == 1 ]]; then
    log "failed; left $DIR in place (PODLIFE_CONTAINERD_KEEP=1); clean up with: $tools/containerd-down.sh $DIR"
  else
    log "failed; cleaning up $DIR"
    "$tools/containerd-down.sh" "$DIR" >&2 || true
  fi
}
trap cleanup_on_failure EXIT

mkdir -p "$DIR/root" "$DIR/state" "$DIR/runc" "$DIR/opt" "$DIR/images" "$DIR/cni/net.d" "$DIR/cni/ipam"
# Written first: containerd-down.sh refuses to delete a directory without it.
cat >"$DIR/podlife-containerd.env" <<EOF
# written by tools/containerd-up.sh; read by tools/containerd-down.sh
DIR=$DIR
SOCK=$SOCK
EOF

# --- snapshotter: overlayfs if an overlay mount works on DIR's filesystem --
# (it does not on some overlay- or network-backed roots, or without the
# overlay module, or in a user namespace on old kernels); native otherwise.
# The same test containerd's overlayfs plugin makes, done up front because
# the CRI plugin fails if its snapshotter did not load.
detect_snapshotter() {
  local t="$DIR/root/overlay-check" err
  mkdir -p "$t/lower" "$t/upper" "$t/work" "$t/merged"
  if err="$(mount -t overlay overlay -o "lowerdir=$t/lower,upperdir=$t/upper,workdir=$t/work" "$t/merged" 2>&1)"; then
    umount "$t/merged"
    rm -rf "$t"
    echo overlayfs
  else
    rm -rf "$t"
    log "overlayfs does not work on $DIR ($err); falling back to the native snapshotter (full copies, slower)"
    echo native
  fi
}
SNAPSHOTTER="${PODLIFE_CONTAINERD_SNAPSHOTTER:-$(detect_snapshotter)}"
case "$SNAPSHOTTER" in
  overlayfs | native) ;;
  *) die "PODLIFE_CONTAINERD_SNAPSHOTTER must be overlayfs or native, not $SNAPSHOTTER" ;;
esac

# --- CNI: one bridge per instance ---------------------------------------------
# Bridge name and /24 derive from DIR, so two instances (two CI jobs on one
# host) do not share a bridge; a subnet already routed on this host is
# skipped. ipMasq (pod egress via NAT) only if iptables works here; the
# bridge plugin needs it for nothing else. Loopback is not in the list:
# containerd's CRI plugin brings lo up itself, with the loopback plugin from
# bin_dir.
hash="$(printf '%s' "$DIR" | sha256sum | cut -c1-8)"
BRIDGE="podlife${hash:0:6}"
CNI_NET="podlife-$hash"
# iproute2's ip if installed, else busybox's applet.
if command -v ip >/dev/null; then
  routes="$(ip -4 route show)"
else
  routes="$("${BUSYBOX:-/bin/busybox}" ip -4 route show)"
fi
subnet=""
n=$((16#${hash:6:2}))
for _ in $(seq 256); do
  if ! grep -q "^10\.250\.$n\." <<<"$routes"; then
    subnet="10.250.$n.0/24"
    break
  fi
  n=$(((n + 1) % 256))
done
[[ -n "$subnet" ]] || die "no free /24 in 10.250.0.0/16 for the pod network"
if command -v iptables >/dev/null && iptables -w 5 -t nat -S POSTROUTING >/dev/null 2>&1; then
  ipmasq=true
else
  ipmasq=false
  log "iptables missing or not working: the pod network has no ipMasq (no egress NAT)"
fi
cat >"$DIR/cni/net.d/10-podlife.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NET",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": $ipmasq,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$DIR/cni/ipam",
        "ranges": [[{"subnet": "$subnet"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
EOF
# The bridge plugin turns on IPv4 forwarding for its gateway;
# containerd-down.sh turns it back off if it was off.
cat >>"$DIR/podlife-containerd.env" <<EOF
IP_FORWARD=$(cat /proc/sys/net/ipv4/ip_forward 2>/dev/null || true)
SNAPSHOTTER=$SNAPSHOTTER
BRIDGE=$BRIDGE
CNI_NET=$CNI_NET
CNI_BIN_DIR=$CNI_BIN_DIR
SUBNET=$subnet
CONTAINERD_BIN=${PODLIFE_CONTAINERD_BIN:-}
EOF

# --- config.toml --------------------------------------------------------------
cat >"$DIR/config.toml" <<EOF
# Written by tools/containerd-up.sh. A private containerd: nothing outside
# $DIR except shim sockets (/run/containerd/s).
version = 2
# Snapshotters this never uses; devmapper would log an error on every start.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
root = "$DIR/root"
state = "$DIR/state"

[grpc]
  address = "$SOCK"

[ttrpc]
  address = "$SOCK.ttrpc"

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$DIR/opt"

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    # Containers may not get a lower oom_score_adj than containerd itself,
    # as when the agent does not run as a privileged system daemon.
    restrict_oom_score_adj = true
    # Sandbox network namespaces under state/, not /var/run/netns, so that
    # containerd-down.sh finds and unmounts every one.
    netns_mounts_under_state_dir = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"

    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "$SNAPSHOTTER"
      default_runtime_name = "runc"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          BinaryName = "$RUNC"
          # runc's state (per namespace) under DIR, not /run/containerd/runc.
          Root = "$DIR/runc"
          SystemdCgroup = false

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$CNI_BIN_DIR"
      conf_dir = "$DIR/cni/net.d"
      max_conf_num = 1
EOF

# --- images ------------------------------------------------------------------
"$tools/busybox-image.sh" "$DIR/images/busybox.tar" "$BUSYBOX_IMAGE"
# The sandbox's only process: PID 1 of the pod, holding its namespaces. A
# shell as PID 1 gets only the signals it traps, so TERM (and INT) end it;
# KILL always does.
"$tools/busybox-image.sh" "$DIR/images/pause.tar" "$PAUSE_IMAGE" \
  /bin/sh -c 'trap "exit 0" TERM INT; sleep 2147483647 & wait'

# --- start and wait ------------------------------------------------------------
log "starting containerd $(containerd --version | awk '{print $3}') in $DIR (snapshotter $SNAPSHOTTER, bridge $BRIDGE $subnet, ipMasq $ipmasq)"
# setsid: not in the caller's session or process group, so a ^C or a job
# control kill of the caller does not take it down half way; stdin/stdout
# away from the caller so `$(containerd-up.sh)` returns.
setsid containerd --config "$DIR/config.toml" --log-level "${PODLIFE_CONTAINERD_LOG_LEVEL:-info}" \
  </dev/null >>"$DIR/containerd.log" 2>&1 &
pid=$!
echo "$pid" >"$DIR/containerd.pid"
echo "PID=$pid" >>"$DIR/podlife-containerd.env"

ctr=(ctr --address "$SOCK")
deadline=$((SECONDS + 30))
until "${ctr[@]}" version >/dev/null 2>&1; do
  kill -0 "$pid" 2>/dev/null || die "containerd exited during startup (see $DIR/containerd.log)"
  [[ $SECONDS -lt $deadline ]] || die "containerd did not answer on $SOCK within 30s"
  sleep 0.1
done

# The CRI plugin and its snapshotter load or fail without stopping
# containerd; catch that here rather than as a puzzling test failure.
plugins="$("${ctr[@]}" plugins ls)"
plugin_status() { awk -v t="$1" -v id="$2" '$1 == t && $2 == id { print $NF }' <<<"$plugins"; }
[[ "$(plugin_status io.containerd.snapshotter.v1 "$SNAPSHOTTER")" == ok ]] ||
  die "snapshotter $SNAPSHOTTER did not load: $(plugin_status io.containerd.snapshotter.v1 "$SNAPSHOTTER")"
[[ "$(plugin_status io.containerd.grpc.v1 cri)" == ok ]] ||
  die "the CRI plugin did not load ($(plugin_status io.containerd.grpc.v1 cri)); see $DIR/containerd.log"

for img in busybox pause; do
  "${ctr[@]}" -n k8s.io images import --snapshotter "$SNAPSHOTTER" "$DIR/images/$img.tar" >&2
done
images="$("${ctr[@]}" -n k8s.io images ls -q)"
for ref in "$BUSYBOX_IMAGE" "$PAUSE_IMAGE"; do
  grep -qxF "$ref" <<<"$images" || die "image $ref missing after import; have: $images"
done

ok=1
log "ready in $((SECONDS - start))s: pid $pid, log $DIR/containerd.log; stop with: $tools/containerd-down.sh $DIR"
echo "unix://$SOCK"
