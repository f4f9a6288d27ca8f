#!/usr/bin/env bash
# Starts a Kubernetes control plane on localhost for podlife's cluster mode,
# configured as kubeadm configures one (kubeadm's static pod manifests:
# cmd/kubeadm/app/phases/controlplane/manifests.go and etcd/local.go): etcd,
# kube-apiserver, kube-controller-manager and kube-scheduler, built by
# tools/cluster-build.sh. Its last lines on stdout are shell exports:
#
#   eval "$(tools/cluster-up.sh)"
#   export PODLIFE_CLUSTER_DIR=...            the state directory (for cluster-down.sh)
#   export PODLIFE_CLUSTER_BIN=...            the binaries, kubectl among them
#   export PODLIFE_NODE_NAME=...              the node the node identity may register
#   export PODLIFE_NODE_KUBECONFIG=...        kubeconfig of system:node:<name>
#   export PODLIFE_BOOTSTRAP_KUBECONFIG=...   kubeconfig with the bootstrap token
#   export KUBECONFIG=...                     kubeconfig of an admin (system:masters)
#   ...
#   tools/cluster-down.sh "$PODLIFE_CLUSTER_DIR"
#
# What runs, as in a kubeadm cluster:
#
# - etcd serves TLS only, client and peer, each requiring a client
#   certificate from its own CA (pki/etcd/ca.crt): --client-cert-auth and
#   --peer-client-cert-auth. The apiserver connects with
#   pki/apiserver-etcd-client; this script checks its health with
#   pki/etcd/healthcheck-client, and checks that a client without a
#   certificate, or with one of the cluster CA, is refused.
# - kube-apiserver with its default admission plugins (ServiceAccount,
#   TaintNodesByCondition, PodSecurity, DefaultTolerationSeconds, ...) and
#   NodeRestriction, --authorization-mode=Node,RBAC, bootstrap token
#   authentication, a client certificate for the kubelet API
#   (pki/apiserver-kubelet-client, bound to ClusterRole
#   system:kubelet-api-admin as kubeadm binds it), and the front proxy for API
#   aggregation (pki/front-proxy-ca, the --requestheader-* flags, the
#   front-proxy-client certificate; --enable-aggregator-routing, since there
#   is no kube-proxy to reach a service's cluster IP).
# - kube-controller-manager with every default controller plus
#   bootstrapsigner and tokencleaner (--controllers=*,bootstrapsigner,
#   tokencleaner), each with its own service account
#   (--use-service-account-credentials): among them the namespace, garbage
#   collector, service account and token controllers, the root-CA publisher
#   (the kube-root-ca.crt ConfigMap in every namespace), the node lifecycle
#   controller (with its default --node-monitor-* timings unless
#   PODLIFE_CLUSTER_NODE_MONITOR_GRACE_PERIOD is set: a new Node is
#   tainted node.kubernetes.io/not-ready:NoSchedule until it reports Ready, a
#   Node whose Lease and status go silent is marked Unknown and tainted
#   unreachable) and the CSR signing (with the cluster CA) and approving
#   controllers. No cloud provider, no node CIDR allocation; the FlexVolume
#   plugin directory is DIR/flexvolume (the default, which it would create,
#   is under /usr/libexec).
# - kube-scheduler.
# - A bootstrap token, as `kubeadm init` makes one for `kubeadm join`: the
#   Secret kube-system/bootstrap-token-<id> (authentication and signing, extra
#   group system:bootstrappers:kubeadm:default-node-token, expiring after
#   PODLIFE_BOOTSTRAP_TOKEN_TTL), kubeadm's ClusterRoleBindings for it (post
#   CSRs, have them auto-approved, get nodes; nodes auto-approved when they
#   renew their own client certificates), and the kube-public/cluster-info
#   ConfigMap that the bootstrapsigner signs with the token.
#
# Clients authenticate with client certificates from the cluster CA
# (pki/ca.crt), made here with openssl: the admin (group system:masters),
# system:kube-controller-manager, system:kube-scheduler, and
# system:node:<name> in group system:nodes; or with the bootstrap token
# (bootstrap.kubeconfig). The start ends once the `default` ServiceAccount of
# namespace default exists, so pods can be created at once.
#
# Everything lives in one directory: $PODLIFE_CLUSTER_DIR if set (created if
# missing; must be empty), else a new `mktemp -d`. In it: pki/ (keys and
# certificates, 0700), etcd/ (its data), *.kubeconfig (0600), <component>.log
# and <component>.pid, and podlife-cluster.env (the ports). Everything listens
# on 127.0.0.1 only. The apiserver advertises 127.0.0.1, which its endpoint
# reconciler refuses, so that is off: the `kubernetes` service has no
# endpoints (nothing here runs in-cluster clients that would need it). Ports
# are picked free at random and checked; a port taken between the check and
# the bind makes the start fail (run it again). Diagnostics go to stderr.
#
# Options and environment:
#   --node-name NAME, PODLIFE_NODE_NAME  the node identity's name (default:
#                            the host name lowercased, or podlife-node if that
#                            is not a valid node name)
#   PODLIFE_CLUSTER_DIR      the directory (default: mktemp -d)
#   PODLIFE_CLUSTER_KEEP=1   on failure, leave the directory and logs in place
#   PODLIFE_CLUSTER_CACHE    where cluster-build.sh keeps the binaries
#   PODLIFE_CLUSTER_SIGNING_DURATION  the lifetime of the certificates the CSR
#                            signer issues (--cluster-signing-duration; default
#                            8760h; short ones, e.g. 3m, make a node rotate
#                            its client certificate soon; the signer has no
#                            minimum, and backdates notBefore by 5 minutes)
#   PODLIFE_BOOTSTRAP_TOKEN_TTL  how long the bootstrap token is valid (default
#                            24h, kubeadm's; hours, minutes or seconds: 90m)
#   PODLIFE_CLUSTER_NODE_MONITOR_GRACE_PERIOD  how long a silent node stays
#                            Ready before it is marked Unknown (the controller
#                            manager's --node-monitor-grace-period; default
#                            its own, 50s); tools/lost-and-found.sh makes it
#                            short so a lost node shows soon
#   PODLIFE_CLUSTER_TOLERATION_SECONDS  the tolerationSeconds of the
#                            not-ready and unreachable tolerations added to
#                            every pod (the apiserver's
#                            --default-not-ready-toleration-seconds and
#                            --default-unreachable-toleration-seconds; default
#                            theirs, 300): how long a pod stays bound to a
#                            lost node before it is evicted
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

# A Go duration of hours, minutes and seconds, as the controller manager's
# flag takes it (no fractions: the script does arithmetic on the token TTL).
duration_re='^([0-9]+h)?([0-9]+m)?([0-9]+s)?$'
SIGNING_DURATION="${PODLIFE_CLUSTER_SIGNING_DURATION:-8760h}"
[[ -n "$SIGNING_DURATION" && "$SIGNING_DURATION" =~ $duration_re ]] ||
  die "PODLIFE_CLUSTER_SIGNING_DURATION=\"$SIGNING_DURATION\" is not a duration like 8760h, 3m or 1h30m"
TOKEN_TTL="${PODLIFE_BOOTSTRAP_TOKEN_TTL:-24h}"
[[ -n "$TOKEN_TTL" && "$TOKEN_TTL" =~ $duration_re ]] ||
  die "PODLIFE_BOOTSTRAP_TOKEN_TTL=\"$TOKEN_TTL\" is not a duration like 24h, 90m or 1h30m"
# seconds DURATION: the duration in seconds.
seconds() {
  local total=0
  [[ ! "$1" =~ ([0-9]+)h ]] || total=$((total + 10#${BASH_REMATCH[1]} * 3600))
  [[ ! "$1" =~ ([0-9]+)m ]] || total=$((total + 10#${BASH_REMATCH[1]} * 60))
  [[ ! "$1" =~ ([0-9]+)s ]] || total=$((total + 10#${BASH_REMATCH[1]}))
  echo "$total"
}
(($(seconds "$TOKEN_TTL") > 0)) || die "PODLIFE_BOOTSTRAP_TOKEN_TTL=\"$TOKEN_TTL\" must be longer than 0s"
(($(seconds "$SIGNING_DURATION") > 0)) || die "PODLIFE_CLUSTER_SIGNING_DURATION=\"$SIGNING_DURATION\" must be longer than 0s"
# The node lifecycle settings: the components' defaults unless set.
controller_manager_extra=() apiserver_extra=()
if [[ -n "${PODLIFE_CLUSTER_NODE_MONITOR_GRACE_PERIOD:-}" ]]; then
  grace="$PODLIFE_CLUSTER_NODE_MONITOR_GRACE_PERIOD"
  [[ "$grace" =~ $duration_re ]] && (($(seconds "$grace") > 0)) ||
    die "PODLIFE_CLUSTER_NODE_MONITOR_GRACE_PERIOD=\"$grace\" is not a duration longer than 0s like 20s or 1m"
  controller_manager_extra+=(--node-monitor-grace-period "$grace")
fi
if [[ -n "${PODLIFE_CLUSTER_TOLERATION_SECONDS:-}" ]]; then
  [[ "$PODLIFE_CLUSTER_TOLERATION_SECONDS" =~ ^[0-9]+$ ]] ||
    die "PODLIFE_CLUSTER_TOLERATION_SECONDS=\"$PODLIFE_CLUSTER_TOLERATION_SECONDS\" is not a number of seconds"
  apiserver_extra+=(--default-not-ready-toleration-seconds "$PODLIFE_CLUSTER_TOLERATION_SECONDS"
    --default-unreachable-toleration-seconds "$PODLIFE_CLUSTER_TOLERATION_SECONDS")
fi

for cmd in openssl curl base64 date; do
  command -v "$cmd" >/dev/null || die "missing: $cmd"
done

# The components, in the order they start; cluster-down.sh stops them in the
# reverse order.
components=(etcd kube-apiserver kube-controller-manager kube-scheduler)

# --- the binaries ------------------------------------------------------------
BIN="$("$tools/cluster-build.sh" | tail -n 1)"
for name in "${components[@]}" kubectl; do
  [[ -x "$BIN/$name" ]] || die "cluster-build.sh printed $BIN, which has no $name"
done

# --- the directory -----------------------------------------------------------
if [[ -n "${PODLIFE_CLUSTER_DIR:-}" ]]; then
  mkdir -p "$PODLIFE_CLUSTER_DIR"
  DIR="$(cd "$PODLIFE_CLUSTER_DIR" && pwd -P)"
  for name in "${components[@]}"; do
    if [[ -f "$DIR/$name.pid" ]] && kill -0 "$(cat "$DIR/$name.pid")" 2>/dev/null; then
      die "a control plane already runs in $DIR ($name pid $(cat "$DIR/$name.pid")); stop it with tools/cluster-down.sh $DIR"
    fi
  done
  [[ -z "$(ls -A "$DIR")" ]] ||
    die "$DIR is not empty; remove it with tools/cluster-down.sh $DIR or pick another PODLIFE_CLUSTER_DIR"
else
  DIR="$(mktemp -d /tmp/podlife-cluster-XXXXXX)"
fi
chmod 700 "$DIR"
# Keys, kubeconfigs and the token: readable by the owner only.
umask 077
# Marks the directory as ours for cluster-down.sh before anything starts.
echo "NODE_NAME=$NODE_NAME" >"$DIR/podlife-cluster.env"

cleanup_on_failure() {
  local rc=$? name i
  [[ $rc -ne 0 ]] || return 0
  for name in "${components[@]}"; do
    [[ -f "$DIR/$name.log" ]] || continue
    log "last lines of $DIR/$name.log:"
    tail -n 15 "$DIR/$name.log" >&2 || true
  done
  if [[ "${PODLIFE_CLUSTER_KEEP:-}" == 1 ]]; then
    # Stop the processes but keep the files.
    for ((i = ${#components[@]} - 1; i >= 0; i--)); do
      name="${components[i]}"
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
CONTROLLER_MANAGER_PORT="$(free_port)"
SCHEDULER_PORT="$(free_port)"
cat >>"$DIR/podlife-cluster.env" <<EOF
ETCD_PORT=$ETCD_PORT
ETCD_PEER_PORT=$ETCD_PEER_PORT
APISERVER_PORT=$APISERVER_PORT
CONTROLLER_MANAGER_PORT=$CONTROLLER_MANAGER_PORT
SCHEDULER_PORT=$SCHEDULER_PORT
EOF
SERVER="https://127.0.0.1:$APISERVER_PORT"

# --- certificates ------------------------------------------------------------
# The layout and names of kubeadm's /etc/kubernetes/pki: three CAs (the
# cluster's, etcd's, the front proxy's), each certificate signed by one.
# CAs live 10 years and the others one year, as kubeadm's. Keys are ECDSA
# P-256, kubeadm's encryptionAlgorithm ECDSA-P256: its default RSA-2048 takes
# half a second a key on a busy two-core machine, and there are 16.
PKI="$DIR/pki"
mkdir -m 700 "$PKI" "$PKI/etcd"
ssl() { openssl "$@" 2>>"$PKI/openssl.log" || die "openssl $1 failed; see $PKI/openssl.log"; }
# ca NAME CN: a self-signed CA, pki/NAME.crt and pki/NAME.key.
ca() {
  ssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 -subj "/CN=$2" \
    -addext "keyUsage=critical,digitalSignature,keyCertSign" \
    -keyout "$PKI/$1.key" -out "$PKI/$1.crt"
}
# cert CA NAME SUBJECT [EXTENSIONS]: a key and a certificate signed by
# pki/CA, pki/NAME.crt and pki/NAME.key; a client certificate unless
# EXTENSIONS say otherwise.
cert() {
  local ca="$1" name="$2" subject="$3" ext="${4:-extendedKeyUsage=clientAuth}"
  ssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$subject" -keyout "$PKI/$name.key" -out "$PKI/$name.csr"
  local extfile="$PKI/$name.ext"
  printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature" "$ext" >"$extfile"
  ssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" -CAcreateserial \
    -days 365 -extfile "$extfile" -out "$PKI/$name.crt"
  rm -f "$PKI/$name.csr" "$extfile"
}
ca ca kubernetes
ca etcd/ca etcd-ca
ca front-proxy-ca front-proxy-ca
# 10.0.0.1 is the first address of --service-cluster-ip-range: the
# `kubernetes` service.
cert ca apiserver "/CN=kube-apiserver" \
  "$(printf '%s\n' "extendedKeyUsage=serverAuth" \
    "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local")"
# kubeadm v1.37's apiserver-kubelet-client has no group: its rights come from
# the ClusterRoleBinding kubeadm:apiserver-kubelet-client made below
# (cmd/kubeadm/app/phases/certs/certlist.go, bootstraptoken/node/tlsbootstrap.go).
cert ca apiserver-kubelet-client "/CN=kube-apiserver-kubelet-client"
cert front-proxy-ca front-proxy-client "/CN=front-proxy-client"
etcd_san="subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost"
cert etcd/ca etcd/server "/CN=$NODE_NAME" "$(printf '%s\n' "extendedKeyUsage=serverAuth,clientAuth" "$etcd_san")"
cert etcd/ca etcd/peer "/CN=$NODE_NAME" "$(printf '%s\n' "extendedKeyUsage=serverAuth,clientAuth" "$etcd_san")"
cert etcd/ca etcd/healthcheck-client "/CN=kube-etcd-healthcheck-client"
cert etcd/ca apiserver-etcd-client "/CN=kube-apiserver-etcd-client"
cert ca admin "/O=system:masters/CN=podlife-admin"
cert ca controller-manager "/CN=system:kube-controller-manager"
cert ca scheduler "/CN=system:kube-scheduler"
cert ca node "/O=system:nodes/CN=system:node:$NODE_NAME"
ssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$PKI/sa.key"
ssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"

# b64 FILE: the file in base64 on one line, as kubeconfig *-data fields want.
b64() { base64 -w0 <"$1"; }
# write_kubeconfig NAME USER-YAML: DIR/NAME.kubeconfig (0600) for the user
# whose credentials USER-YAML gives (indented for `user:`).
write_kubeconfig() {
  local name="$1" user="$2"
  cat >"$DIR/$1.kubeconfig" <<EOF
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
$user
contexts:
- name: $name@podlife
  context:
    cluster: podlife
    user: $name
current-context: $name@podlife
EOF
}
# kubeconfig NAME: DIR/NAME.kubeconfig for the client certificate pki/NAME.
kubeconfig() {
  write_kubeconfig "$1" "    client-certificate-data: $(b64 "$PKI/$1.crt")
    client-key-data: $(b64 "$PKI/$1.key")"
}
kubeconfig admin
kubeconfig controller-manager
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
# failing early when process PIDNAME has exited, and showing what COMMAND last
# printed when it gives up.
wait_for() {
  local what="$1" limit="$2" name="$3" deadline=$((SECONDS + $2)) out="$DIR/wait.out"
  shift 3
  until "$@" >"$out" 2>&1; do
    kill -0 "$(cat "$DIR/$name.pid")" 2>/dev/null || die "$name exited while waiting for $what"
    ((SECONDS < deadline)) || die "$what not ready after ${limit}s: $(tail -n 5 "$out")"
    sleep 0.2
  done
  rm -f "$out"
  log "$what ready after $((SECONDS - start))s"
}
kubectl() { "$BIN/kubectl" --kubeconfig "$DIR/admin.kubeconfig" "$@"; }

ETCD_URL="https://127.0.0.1:$ETCD_PORT"
ETCD_PEER_URL="https://127.0.0.1:$ETCD_PEER_PORT"
launch etcd --name "$NODE_NAME" --data-dir "$DIR/etcd" \
  --listen-client-urls "$ETCD_URL" --advertise-client-urls "$ETCD_URL" \
  --listen-peer-urls "$ETCD_PEER_URL" --initial-advertise-peer-urls "$ETCD_PEER_URL" \
  --initial-cluster "$NODE_NAME=$ETCD_PEER_URL" \
  --cert-file "$PKI/etcd/server.crt" --key-file "$PKI/etcd/server.key" \
  --trusted-ca-file "$PKI/etcd/ca.crt" --client-cert-auth=true \
  --peer-cert-file "$PKI/etcd/peer.crt" --peer-key-file "$PKI/etcd/peer.key" \
  --peer-trusted-ca-file "$PKI/etcd/ca.crt" --peer-client-cert-auth=true \
  --snapshot-count 10000 --watch-progress-notify-interval 5s
wait_for etcd 60 etcd curl -fsS --cacert "$PKI/etcd/ca.crt" \
  --cert "$PKI/etcd/healthcheck-client.crt" --key "$PKI/etcd/healthcheck-client.key" "$ETCD_URL/health"
# etcd must refuse a client without a certificate of its CA: without a
# certificate, and with one from the cluster CA.
for creds in "" "--cert $PKI/admin.crt --key $PKI/admin.key"; do
  # shellcheck disable=SC2086 # creds is a word list, split on purpose
  if curl -fsS --cacert "$PKI/etcd/ca.crt" $creds "$ETCD_URL/health" >/dev/null 2>&1; then
    die "etcd answered a client ${creds:+with a cluster-CA certificate}${creds:-without a certificate}: client certificate authentication is off"
  fi
done
log "etcd refuses clients without a certificate of the etcd CA"

launch kube-apiserver \
  --etcd-servers "$ETCD_URL" \
  --etcd-cafile "$PKI/etcd/ca.crt" \
  --etcd-certfile "$PKI/apiserver-etcd-client.crt" --etcd-keyfile "$PKI/apiserver-etcd-client.key" \
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
  --enable-bootstrap-token-auth=true \
  --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" \
  --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types InternalIP,ExternalIP,Hostname \
  --requestheader-client-ca-file "$PKI/front-proxy-ca.crt" \
  --requestheader-allowed-names front-proxy-client \
  --requestheader-username-headers X-Remote-User \
  --requestheader-group-headers X-Remote-Group \
  --requestheader-extra-headers-prefix X-Remote-Extra- \
  --proxy-client-cert-file "$PKI/front-proxy-client.crt" \
  --proxy-client-key-file "$PKI/front-proxy-client.key" \
  --enable-aggregator-routing=true \
  --allow-privileged=true \
  ${apiserver_extra[@]+"${apiserver_extra[@]}"} \
  --profiling=false
wait_for "kube-apiserver /readyz" 120 kube-apiserver kubectl get --raw /readyz

launch kube-controller-manager \
  --kubeconfig "$DIR/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$DIR/controller-manager.kubeconfig" \
  --authorization-kubeconfig "$DIR/controller-manager.kubeconfig" \
  --client-ca-file "$PKI/ca.crt" \
  --requestheader-client-ca-file "$PKI/front-proxy-ca.crt" \
  --bind-address 127.0.0.1 --secure-port "$CONTROLLER_MANAGER_PORT" \
  --leader-elect=false \
  --controllers '*,bootstrapsigner,tokencleaner' \
  --use-service-account-credentials=true \
  --root-ca-file "$PKI/ca.crt" \
  --service-account-private-key-file "$PKI/sa.key" \
  --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
  --cluster-signing-duration "$SIGNING_DURATION" \
  --allocate-node-cidrs=false \
  --flex-volume-plugin-dir "$DIR/flexvolume" \
  ${controller_manager_extra[@]+"${controller_manager_extra[@]}"} \
  --profiling=false
wait_for "kube-controller-manager /healthz" 60 kube-controller-manager \
  curl -fsSk "https://127.0.0.1:$CONTROLLER_MANAGER_PORT/healthz"

launch kube-scheduler \
  --kubeconfig "$DIR/scheduler.kubeconfig" \
  --authentication-kubeconfig "$DIR/scheduler.kubeconfig" \
  --authorization-kubeconfig "$DIR/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" \
  --leader-elect=false \
  --profiling=false
wait_for "kube-scheduler /healthz" 60 kube-scheduler \
  curl -fsSk "https://127.0.0.1:$SCHEDULER_PORT/healthz"

# --- the bootstrap token and kubeadm's RBAC ----------------------------------
# A token is <id>.<secret>: 6 and 16 characters of [a-z0-9]
# (k8s.io/cluster-bootstrap/token/api).
random_token_part() {
  local out="" c
  while ((${#out} < $1)); do
    c="$(head -c 64 /dev/urandom | tr -dc 'a-z0-9')"
    out+="$c"
  done
  echo "${out:0:$1}"
}
TOKEN_ID="$(random_token_part 6)"
TOKEN_SECRET="$(random_token_part 16)"
TOKEN_EXPIRATION="$(date -u -d "@$(($(date +%s) + $(seconds "$TOKEN_TTL")))" +%Y-%m-%dT%H:%M:%SZ)"
echo "BOOTSTRAP_TOKEN_ID=$TOKEN_ID" >>"$DIR/podlife-cluster.env"
# crb NAME ROLE KIND SUBJECT: a ClusterRoleBinding, as a YAML document.
crb() {
  cat <<EOF
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: $1
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: $2
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: $3
  name: $4
EOF
}
bootstrappers=system:bootstrappers:kubeadm:default-node-token
# The Secret's values go through a file of pki/ (0600), never the command line.
{
  cat <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: bootstrap-token-$TOKEN_ID
  namespace: kube-system
type: bootstrap.kubernetes.io/token
stringData:
  description: "The default bootstrap token of tools/cluster-up.sh, as kubeadm init makes one."
  token-id: "$TOKEN_ID"
  token-secret: "$TOKEN_SECRET"
  expiration: "$TOKEN_EXPIRATION"
  usage-bootstrap-authentication: "true"
  usage-bootstrap-signing: "true"
  auth-extra-groups: "$bootstrappers"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-info
  namespace: kube-public
data:
  kubeconfig: |
    apiVersion: v1
    kind: Config
    clusters:
    - name: ""
      cluster:
        server: $SERVER
        certificate-authority-data: $(b64 "$PKI/ca.crt")
    contexts: null
    current-context: ""
    preferences: {}
    users: null
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: kubeadm:bootstrap-signer-clusterinfo
  namespace: kube-public
rules:
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [cluster-info]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: kubeadm:bootstrap-signer-clusterinfo
  namespace: kube-public
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: kubeadm:bootstrap-signer-clusterinfo
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: system:anonymous
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kubeadm:get-nodes
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get]
EOF
  crb kubeadm:kubelet-bootstrap system:node-bootstrapper Group "$bootstrappers"
  crb kubeadm:node-autoapprove-bootstrap system:certificates.k8s.io:certificatesigningrequests:nodeclient Group "$bootstrappers"
  crb kubeadm:node-autoapprove-certificate-rotation system:certificates.k8s.io:certificatesigningrequests:selfnodeclient Group system:nodes
  crb kubeadm:get-nodes kubeadm:get-nodes Group "$bootstrappers"
  crb kubeadm:apiserver-kubelet-client system:kubelet-api-admin User kube-apiserver-kubelet-client
} >"$PKI/kubeadm-objects.yaml"
# The apiserver makes kube-public after it is ready: apply until it exists.
wait_for "the bootstrap token and kubeadm's RBAC" 30 kube-apiserver \
  kubectl apply -f "$PKI/kubeadm-objects.yaml"
rm -f "$PKI/kubeadm-objects.yaml"
write_kubeconfig bootstrap "    token: $TOKEN_ID.$TOKEN_SECRET"
log "bootstrap token $TOKEN_ID expires $TOKEN_EXPIRATION"

# The service account controller makes namespace default's ServiceAccount;
# until then the ServiceAccount admission plugin refuses its pods.
wait_for "the default ServiceAccount" 60 kube-controller-manager \
  kubectl -n default get serviceaccount default

trap - EXIT
log "control plane up in $((SECONDS - start))s; kubectl: $BIN/kubectl; stop it with: $tools/cluster-down.sh $DIR"
printf 'export PODLIFE_CLUSTER_DIR=%q\n' "$DIR"
printf 'export PODLIFE_CLUSTER_BIN=%q\n' "$BIN"
printf 'export PODLIFE_NODE_NAME=%q\n' "$NODE_NAME"
printf 'export PODLIFE_NODE_KUBECONFIG=%q\n' "$DIR/node.kubeconfig"
printf 'export PODLIFE_BOOTSTRAP_KUBECONFIG=%q\n' "$DIR/bootstrap.kubeconfig"
printf 'export KUBECONFIG=%q\n' "$DIR/admin.kubeconfig"
