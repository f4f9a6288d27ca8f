#!/usr/bin/env bash
# Starts a Kubernetes control plane on localhost for podlife's cluster mode:
# etcd, kube-apiserver and kube-scheduler (no kube-controller-manager), built
# by tools/cluster-build.sh. Its last lines on stdout are shell exports:
#
#   eval "$(tools/cluster-up.sh)"   # or: tools/cluster-up.sh | tail -5
#   export PODLIFE_CLUSTER_DIR=...      the state directory (for cluster-down.sh)
#   export PODLIFE_CLUSTER_BIN=...      the binaries, kubectl among them
#   export PODLIFE_NODE_NAME=...        the node the node identity may register
#   export PODLIFE_NODE_KUBECONFIG=...  kubeconfig of system:node:<name>
#   export KUBECONFIG=...               kubeconfig of an admin (system:masters)
#   ...
#   tools/cluster-down.sh "$PODLIFE_CLUSTER_DIR"
#
# As in a real cluster, the apiserver runs with --authorization-mode=Node,RBAC
# and the NodeRestriction admission plugin; clients authenticate with client
# certificates from a CA made here with openssl: the admin (group
# system:masters), system:kube-scheduler, and system:node:<name> in group
# system:nodes.
#
# Without a controller manager there is no namespace controller (a deleted
# namespace stays Terminating), no garbage collector (no cascading deletion
# by owner references), no ServiceAccount or token controller (no `default`
# service account in new namespaces) and no node lifecycle controller (a
# silent node is never marked NotReady, its pods never evicted). So the
# ServiceAccount admission plugin is disabled: with it, every pod needs its
# service account object and gets a projected token volume whose
# kube-root-ca.crt ConfigMap nobody publishes. Pods here get no token. The
# TaintNodesByCondition admission plugin is disabled too: it taints every new
# Node node.kubernetes.io/not-ready:NoSchedule, and only the node lifecycle
# controller lifts that taint once the node is Ready, so the scheduler would
# never place a pod. (A NotReady node is then not tainted either.)
#
# Everything lives in one directory: $PODLIFE_CLUSTER_DIR if set (created if
# missing; must be empty), else a new `mktemp -d`. In it: pki/ (keys and
# certificates), etcd/ (its data), *.kubeconfig, <component>.log and
# <component>.pid, and podlife-cluster.env (the ports). etcd serves plain HTTP
# on 127.0.0.1 only. The apiserver advertises 127.0.0.1, which its endpoint
# reconciler refuses, so that is off: the `kubernetes` service has no
# endpoints (nothing here runs in-cluster clients). Ports are picked free at random and checked; a port
# taken between the check and the bind makes the start fail (run it again).
# Diagnostics go to stderr.
#
# Options and environment:
#   --node-name NAME, PODLIFE_NODE_NAME  the node identity's name (default:
#                            the host name lowercased, or podlife-node if that
#                            is not a valid node name)
#   PODLIFE_CLUSTER_DIR      the directory (default: mktemp -d)
#   PODLIFE_CLUSTER_KEEP=1   on failure, leave the directory and logs in place
#   PODLIFE_CLUSTER_CACHE    where cluster-build.sh keeps the binaries
set -euo pipefail

start=$SECONDS
tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOL=cluster-up
log() { echo "$TOOL: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

usage="usage: cluster-up.sh [--node-name NAME]"
NODE_NAME="${PODLIFE_NODE_NAME:-}"
while [[ $# -gt 0 ]]; do
  case "$1" in
  --node-name)
    [[ $# -ge 2 ]] || die "$usage"
    NODE_NAME="$2"
    shift 2
    ;;
  --node-name=*)
    NODE_NAME="${1#--node-name=}"
    shift
    ;;
  *) die "unknown argument $1; $usage" ;;
  esac
done

# A node name is a DNS subdomain: lowercase alphanumerics, '-' and '.'.
node_name_re='^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'
if [[ -z "$NODE_NAME" ]]; then
  NODE_NAME="$(hostname | tr '[:upper:]' '[:lower:]')"
  [[ "$NODE_NAME" =~ $node_name_re && ${#NODE_NAME} -le 253 ]] || NODE_NAME=podlife-node
fi
[[ "$NODE_NAME" =~ $node_name_re && ${#NODE_NAME} -le 253 ]] ||
  die "node name \"$NODE_NAME\" is not a DNS subdomain (lowercase letters, digits, '-' and '.')"

for cmd in openssl curl base64; do
  command -v "$cmd" >/dev/null || die "missing: $cmd"
done

# --- the binaries ------------------------------------------------------------
BIN="$("$tools/cluster-build.sh" | tail -n 1)"
[[ -x "$BIN/kube-apiserver" ]] || die "cluster-build.sh printed no binary directory"

# --- the directory -----------------------------------------------------------
if [[ -n "${PODLIFE_CLUSTER_DIR:-}" ]]; then
  mkdir -p "$PODLIFE_CLUSTER_DIR"
  DIR="$(cd "$PODLIFE_CLUSTER_DIR" && pwd -P)"
  for name in etcd kube-apiserver kube-scheduler; do
    if [[ -f "$DIR/$name.pid" ]] && kill -0 "$(cat "$DIR/$name.pid")" 2>/dev/null; then
      die "a control plane already runs in $DIR ($name pid $(cat "$DIR/$name.pid")); stop it with tools/cluster-down.sh $DIR"
    fi
  done
  [[ -z "$(ls -A "$DIR")" ]] ||
    die "$DIR is not empty; remove it with tools/cluster-down.sh $DIR or pick another PODLIFE_CLUSTER_DIR"
else
  DIR="$(mktemp -d /tmp/podlife-cluster-XXXXXX)"
fi
# Marks the directory as ours for cluster-down.sh before anything starts.
echo "NODE_NAME=$NODE_NAME" >"$DIR/podlife-cluster.env"

cleanup_on_failure() {
  local rc=$?
  [[ $rc -ne 0 ]] || return 0
  for name in etcd kube-apiserver kube-scheduler; do
    [[ -f "$DIR/$name.log" ]] || continue
    log "last lines of $DIR/$name.log:"
    tail -n 15 "$DIR/$name.log" >&2 || true
  done
  if [[ "${PODLIFE_CLUSTER_KEEP:-}" == 1 ]]; then
    # Stop the processes but keep the files.
    for name in kube-scheduler kube-apiserver etcd; do
      if [[ -f "$DIR/$name.pid" ]]; then
        kill -KILL "$(cat "$DIR/$name.pid")" 2>/dev/null || true
      fi
    done
    log "failed; left $DIR in place (PODLIFE_CLUSTER_KEEP=1); remove it with: $tools/cluster-down.sh $DIR"
  else
    "$tools/cluster-down.sh" "$DIR" || true
  fi
  exit "$rc"
}
trap cleanup_on_failure EXIT

# --- ports -------------------------------------------------------------------
# free_port prints a random port in 20000-59999 that nothing listens on and
# that this script has not picked yet.
picked=" "
free_port() {
  local port i
  for ((i = 0; i < 100; i++)); do
    port=$((20000 + RANDOM % 40000))
    [[ "$picked" != *" $port "* ]] || continue
    if [[ -z "$(ss -Htan "sport = :$port" 2>/dev/null)" ]]; then
      picked+="$port "
      echo "$port"
      return 0
    fi
  done
  die "found no free port in 100 tries"
}
command -v ss >/dev/null || die "missing: ss (Debian package: iproute2)"
ETCD_PORT="$(free_port)"
ETCD_PEER_PORT="$(free_port)"
APISERVER_PORT="$(free_port)"
SCHEDULER_PORT="$(free_port)"
cat >>"$DIR/podlife-cluster.env" <<EOF
ETCD_PORT=$ETCD_PORT
ETCD_PEER_PORT=$ETCD_PEER_PORT
APISERVER_PORT=$APISERVER_PORT
SCHEDULER_PORT=$SCHEDULER_PORT
EOF
SERVER="https://127.0.0.1:$APISERVER_PORT"

# --- certificates ------------------------------------------------------------
PKI="$DIR/pki"
mkdir -m 700 "$PKI"
ssl() { openssl "$@" 2>>"$PKI/openssl.log" || die "openssl $1 failed; see $PKI/openssl.log"; }
ssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=podlife-cluster-ca" \
  -keyout "$PKI/ca.key" -out "$PKI/ca.crt"
# cert NAME SUBJECT [EXTENSIONS]: a key and a CA-signed certificate.
cert() {
  local name="$1" subject="$2" ext="${3:-}"
  ssl req -newkey rsa:2048 -nodes -subj "$subject" -keyout "$PKI/$name.key" -out "$PKI/$name.csr"
  local extfile="$PKI/$name.ext"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    [[ -n "$ext" ]] && echo "$ext"
    [[ -n "$ext" ]] || echo "extendedKeyUsage=clientAuth"
  } >"$extfile"
  ssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 30 -extfile "$extfile" -out "$PKI/$name.crt"
  rm -f "$PKI/$name.csr" "$extfile"
}
# 10.0.0.1 is the first address of --service-cluster-ip-range: the
# `kubernetes` service.
cert apiserver "/CN=kube-apiserver" \
  "$(printf '%s\n' "extendedKeyUsage=serverAuth" \
    "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local")"
cert admin "/O=system:masters/CN=podlife-admin"
cert scheduler "/CN=system:kube-scheduler"
cert node "/O=system:nodes/CN=system:node:$NODE_NAME"
ssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$PKI/sa.key"
ssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"

# b64 FILE: the file in base64 on one line, as kubeconfig *-data fields want.
# kubeconfig NAME: DIR/NAME.kubeconfig for the client certificate pki/NAME.
b64() { base64 -w0 <"$1"; }
kubeconfig() {
  local name="$1"
  cat >"$DIR/$name.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: podlife
  cluster:
    server: $SERVER
    certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
- name: $name
  user:
    client-certificate-data: $(b64 "$PKI/$name.crt")
    client-key-data: $(b64 "$PKI/$name.key")
contexts:
- name: $name@podlife
  context:
    cluster: podlife
    user: $name
current-context: $name@podlife
EOF
  chmod 600 "$DIR/$name.kubeconfig"
}
kubeconfig admin
kubeconfig scheduler
kubeconfig node

# --- processes ---------------------------------------------------------------
# launch NAME ARGS...: starts BIN/NAME in the background, logging to
# DIR/NAME.log, its PID in DIR/NAME.pid.
launch() {
  local name="$1"
  shift
  "$BIN/$name" "$@" >"$DIR/$name.log" 2>&1 </dev/null &
  echo $! >"$DIR/$name.pid"
  log "started $name (pid $!, log $DIR/$name.log)"
}
# wait_for WHAT SECONDS PIDNAME COMMAND...: retries COMMAND until it succeeds,
# failing early when process PIDNAME has exited.
wait_for() {
  local what="$1" limit="$2" name="$3" deadline=$((SECONDS + $2))
  shift 3
  until "$@" >/dev/null 2>&1; do
    kill -0 "$(cat "$DIR/$name.pid")" 2>/dev/null || die "$name exited while waiting for $what"
    ((SECONDS < deadline)) || die "$what not ready after ${limit}s"
    sleep 0.2
  done
  log "$what ready after $((SECONDS - start))s"
}

launch etcd --name default --data-dir "$DIR/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT"
wait_for etcd 60 etcd curl -fsS "http://127.0.0.1:$ETCD_PORT/health"

launch kube-apiserver \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
  --endpoint-reconciler-type none \
  --secure-port "$APISERVER_PORT" \
  --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
  --client-ca-file "$PKI/ca.crt" \
  --service-cluster-ip-range 10.0.0.0/24 \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$PKI/sa.pub" \
  --service-account-signing-key-file "$PKI/sa.key" \
  --authorization-mode Node,RBAC \
  --enable-admission-plugins NodeRestriction \
  --disable-admission-plugins ServiceAccount,TaintNodesByCondition \
  --allow-privileged=true \
  --profiling=false
wait_for "kube-apiserver /readyz" 120 kube-apiserver \
  "$BIN/kubectl" --kubeconfig "$DIR/admin.kubeconfig" get --raw /readyz

launch kube-scheduler \
  --kubeconfig "$DIR/scheduler.kubeconfig" \
  --authentication-kubeconfig "$DIR/scheduler.kubeconfig" \
  --authorization-kubeconfig "$DIR/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" \
  --leader-elect=false \
  --profiling=false
wait_for "kube-scheduler /healthz" 60 kube-scheduler \
  curl -fsSk "https://127.0.0.1:$SCHEDULER_PORT/healthz"

trap - EXIT
log "control plane up in $((SECONDS - start))s; kubectl: $BIN/kubectl; stop it with: $tools/cluster-down.sh $DIR"
printf 'export PODLIFE_CLUSTER_DIR=%q\n' "$DIR"
printf 'export PODLIFE_CLUSTER_BIN=%q\n' "$BIN"
printf 'export PODLIFE_NODE_NAME=%q\n' "$NODE_NAME"
printf 'export PODLIFE_NODE_KUBECONFIG=%q\n' "$DIR/node.kubeconfig"
printf 'export KUBECONFIG=%q\n' "$DIR/admin.kubeconfig"
