#!/usr/bin/env bash
# Runs metrics-server (built by tools/metrics-server-build.sh) as a host
# process against a control plane of tools/cluster-up.sh, registered as the
# aggregated API v1beta1.metrics.k8s.io, so that `kubectl top` works. Its last
# lines on stdout are shell exports:
#
#   eval "$(tools/cluster-up.sh)"
#   eval "$(tools/metrics-server-up.sh)"
#   "$PODLIFE_CLUSTER_BIN/kubectl" top pod -A
#   tools/metrics-server-down.sh "$PODLIFE_CLUSTER_DIR"   # before cluster-down.sh
#
# What it sets up, in the cluster and in $PODLIFE_CLUSTER_DIR/metrics-server
# (0700):
#   - an identity of its own: a client certificate for the user
#     podlife-metrics-server, signed by the cluster CA (pki/ca.key), in
#     metrics-server.kubeconfig (0600). metrics-server uses it against the API
#     server and against the nodes' kubelet APIs (whose --client-ca-file is
#     that CA);
#   - the RBAC metrics-server's own manifests give it: get/list/watch of nodes
#     and pods, get of nodes/metrics (GET /metrics/resource on a kubelet),
#     system:auth-delegator (TokenReview, SubjectAccessReview) and the
#     extension-apiserver-authentication-reader Role in kube-system;
#   - a serving certificate signed by the cluster CA for the host's address
#     and metrics-server.kube-system.svc (the name the aggregator checks);
#   - the Service kube-system/metrics-server (no selector, port 443 named
#     https) with an EndpointSlice of the host's address and the port
#     metrics-server listens on, and the APIService v1beta1.metrics.k8s.io
#     pointing at it with the cluster CA as its caBundle. The API server
#     routes to an aggregated API through the service's endpoints
#     (--enable-aggregator-routing: there is no kube-proxy), and an
#     endpoint may not be a loopback address, so metrics-server listens on
#     the host's address (the interface of the default route, as the node
#     reports its InternalIP; PODLIFE_METRICS_SERVER_IP to choose another),
#     on a port picked free.
#
# metrics-server dials each node's kubelet API at its InternalIP and the port
# of the Node's status.daemonEndpoints.kubeletEndpoint, and does not verify
# the kubelet's serving certificate unless PODLIFE_KUBELET_CA names the CA
# that signed it (--kubelet-insecure-tls otherwise: a node's self-signed
# serving certificate has no CA to check it against).
#
# The aggregation layer needs the API server's front-proxy flags
# (--requestheader-client-ca-file, --proxy-client-cert-file, ...): the script
# checks that the control plane published them (the ConfigMap
# kube-system/extension-apiserver-authentication) and refuses otherwise.
#
# Environment (from tools/cluster-up.sh): PODLIFE_CLUSTER_DIR,
# PODLIFE_CLUSTER_BIN, KUBECONFIG (an admin's). Optional: PODLIFE_KUBELET_CA,
# PODLIFE_METRICS_RESOLUTION (default 15s, as metrics-server's own manifests: it must exceed the 10 s kubelet request timeout),
# PODLIFE_METRICS_SERVER_IP.
# Diagnostics go to stderr.
set -euo pipefail

start=$SECONDS
tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOL=metrics-server-up
log() { echo "$TOOL: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

for v in PODLIFE_CLUSTER_DIR PODLIFE_CLUSTER_BIN KUBECONFIG; do
  [[ -n "${!v:-}" ]] || die "$v is not set: run eval \"\$(tools/cluster-up.sh)\" first"
done
CLUSTER="$(cd "$PODLIFE_CLUSTER_DIR" && pwd -P)"
[[ -f "$CLUSTER/podlife-cluster.env" ]] || die "PODLIFE_CLUSTER_DIR=$CLUSTER is not a tools/cluster-up.sh directory"
for f in "$CLUSTER/pki/ca.crt" "$CLUSTER/pki/ca.key"; do
  [[ -f "$f" ]] || die "no $f: the cluster CA signs metrics-server's certificates"
done
KUBECTL="$PODLIFE_CLUSTER_BIN/kubectl"
[[ -x "$KUBECTL" ]] || die "no kubectl in PODLIFE_CLUSTER_BIN=$PODLIFE_CLUSTER_BIN"
if [[ -n "${PODLIFE_KUBELET_CA:-}" && ! -f "$PODLIFE_KUBELET_CA" ]]; then
  die "PODLIFE_KUBELET_CA=$PODLIFE_KUBELET_CA is not a file"
fi
RESOLUTION="${PODLIFE_METRICS_RESOLUTION:-15s}"
for cmd in openssl curl base64 ss ip; do
  command -v "$cmd" >/dev/null || die "missing: $cmd"
done
kubectl() { "$KUBECTL" --kubeconfig "$KUBECONFIG" --request-timeout 30s "$@"; }

# The aggregator proxies with the front-proxy client certificate, and
# metrics-server trusts it through this ConfigMap's requestheader CA.
auth_cm="$(kubectl -n kube-system get configmap extension-apiserver-authentication -o jsonpath='{.data.requestheader-client-ca-file}' 2>/dev/null || true)"
[[ -n "$auth_cm" ]] || die "the API server has no front-proxy (requestheader) configuration: the aggregation layer cannot reach metrics-server; start the control plane with a tools/cluster-up.sh that passes --requestheader-client-ca-file and --proxy-client-cert-file"

MS_BIN="$("$tools/metrics-server-build.sh" | tail -n 1)"
[[ -x "$MS_BIN/metrics-server" ]] || die "metrics-server-build.sh printed no binary directory"

DIR="$CLUSTER/metrics-server"
if [[ -f "$DIR/metrics-server.pid" ]] && kill -0 "$(cat "$DIR/metrics-server.pid")" 2>/dev/null; then
  die "metrics-server already runs for this cluster (pid $(cat "$DIR/metrics-server.pid")); stop it with tools/metrics-server-down.sh $CLUSTER"
fi
rm -rf "$DIR"
mkdir -m 700 "$DIR"

# free_port prints a random port in 20000-59999 that nothing listens on.
free_port() {
  local port i
  for ((i = 0; i < 100; i++)); do
    port=$((20000 + RANDOM % 40000))
    if [[ -z "$(ss -Htan "sport = :$port" 2>/dev/null)" ]]; then
      echo "$port"
      return 0
    fi
  done
  die "found no free port in 100 tries"
}
PORT="$(free_port)"
HOST_IP="${PODLIFE_METRICS_SERVER_IP:-$(ip -4 route get 1.1.1.1 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "src") { print $(i + 1); exit } }')}"
[[ "$HOST_IP" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ && "$HOST_IP" != 127.* ]] ||
  die "no non-loopback IPv4 address for metrics-server to listen on (found \"$HOST_IP\"); set PODLIFE_METRICS_SERVER_IP"

# --- certificates and kubeconfig ---------------------------------------------
ssl() { openssl "$@" 2>>"$DIR/openssl.log" || die "openssl $1 failed; see $DIR/openssl.log"; }
# cert NAME SUBJECT EXTENSIONS: a key and a certificate signed by the cluster CA.
cert() {
  local name="$1" subject="$2" ext="$3"
  ssl req -newkey rsa:2048 -nodes -subj "$subject" -keyout "$DIR/$name.key" -out "$DIR/$name.csr"
  printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" "$ext" >"$DIR/$name.ext"
  ssl x509 -req -in "$DIR/$name.csr" -CA "$CLUSTER/pki/ca.crt" -CAkey "$CLUSTER/pki/ca.key" \
    -CAserial "$DIR/ca.srl" -CAcreateserial -days 30 -extfile "$DIR/$name.ext" -out "$DIR/$name.crt"
  rm -f "$DIR/$name.csr" "$DIR/$name.ext"
  chmod 600 "$DIR/$name.key"
}
cert client "/CN=podlife-metrics-server" "extendedKeyUsage=clientAuth"
cert serving "/CN=metrics-server" "$(printf '%s\n' "extendedKeyUsage=serverAuth" \
  "subjectAltName=IP:$HOST_IP,DNS:metrics-server.kube-system.svc,DNS:metrics-server.kube-system.svc.cluster.local")"
SERVER="$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')"
[[ -n "$SERVER" ]] || die "cannot read the API server's address from KUBECONFIG=$KUBECONFIG"
b64() { base64 -w0 <"$1"; }
cat >"$DIR/metrics-server.kubeconfig" <<EOF_KC
apiVersion: v1
kind: Config
clusters:
- name: podlife
  cluster:
    server: $SERVER
    certificate-authority-data: $(b64 "$CLUSTER/pki/ca.crt")
users:
- name: metrics-server
  user:
    client-certificate-data: $(b64 "$DIR/client.crt")
    client-key-data: $(b64 "$DIR/client.key")
contexts:
- name: metrics-server@podlife
  context:
    cluster: podlife
    user: metrics-server
current-context: metrics-server@podlife
EOF_KC
chmod 600 "$DIR/metrics-server.kubeconfig"

# --- RBAC, Service, APIService -----------------------------------------------
kubectl apply -f - >&2 <<EOF_YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:podlife-metrics-server
rules:
- apiGroups: [""]
  resources: [nodes/metrics]
  verbs: [get]
- apiGroups: [""]
  resources: [pods, nodes]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:podlife-metrics-server
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:podlife-metrics-server
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: podlife-metrics-server
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: podlife-metrics-server:system:auth-delegator
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:auth-delegator
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: podlife-metrics-server
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: podlife-metrics-server-auth-reader
  namespace: kube-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: extension-apiserver-authentication-reader
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: podlife-metrics-server
---
apiVersion: v1
kind: Service
metadata:
  name: metrics-server
  namespace: kube-system
spec:
  ports:
  - name: https
    port: 443
    targetPort: $PORT
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: metrics-server-host
  namespace: kube-system
  labels:
    kubernetes.io/service-name: metrics-server
    endpointslice.kubernetes.io/managed-by: podlife.local-metrics-server-up
addressType: IPv4
endpoints:
- addresses: [$HOST_IP]
  conditions: {ready: true}
ports:
- name: https
  port: $PORT
  protocol: TCP
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
spec:
  group: metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  caBundle: $(b64 "$CLUSTER/pki/ca.crt")
  service:
    name: metrics-server
    namespace: kube-system
    port: 443
EOF_YAML

# --- the process -------------------------------------------------------------
kubelet_tls=(--kubelet-insecure-tls)
[[ -z "${PODLIFE_KUBELET_CA:-}" ]] || kubelet_tls=(--kubelet-certificate-authority "$PODLIFE_KUBELET_CA")
"$MS_BIN/metrics-server" \
  --kubeconfig "$DIR/metrics-server.kubeconfig" \
  --authentication-kubeconfig "$DIR/metrics-server.kubeconfig" \
  --authorization-kubeconfig "$DIR/metrics-server.kubeconfig" \
  --bind-address "$HOST_IP" --secure-port "$PORT" \
  --tls-cert-file "$DIR/serving.crt" --tls-private-key-file "$DIR/serving.key" \
  "${kubelet_tls[@]}" \
  --kubelet-preferred-address-types InternalIP \
  --kubelet-use-node-status-port \
  --metric-resolution "$RESOLUTION" \
  --profiling=false \
  >"$DIR/metrics-server.log" 2>&1 </dev/null &
echo $! >"$DIR/metrics-server.pid"
log "started metrics-server (pid $!, $HOST_IP:$PORT, log $DIR/metrics-server.log)"

fail() {
  log "last lines of $DIR/metrics-server.log:"
  tail -n 20 "$DIR/metrics-server.log" >&2 || true
  "$tools/metrics-server-down.sh" "$CLUSTER" || true
  die "$@"
}
deadline=$((SECONDS + 60))
until curl -fsS --cacert "$CLUSTER/pki/ca.crt" "https://$HOST_IP:$PORT/livez" >/dev/null 2>&1; do
  kill -0 "$(cat "$DIR/metrics-server.pid")" 2>/dev/null || fail "metrics-server exited"
  ((SECONDS < deadline)) || fail "metrics-server /livez not answering after 60s"
  sleep 0.5
done
log "metrics-server serving after $((SECONDS - start))s"
kubectl wait --for=condition=Available --timeout=60s apiservice/v1beta1.metrics.k8s.io >&2 ||
  fail "the APIService v1beta1.metrics.k8s.io is not Available: $(kubectl get apiservice v1beta1.metrics.k8s.io -o jsonpath='{.status.conditions[0].message}')"
log "v1beta1.metrics.k8s.io available after $((SECONDS - start))s; stop with: $tools/metrics-server-down.sh $CLUSTER"
printf 'export PODLIFE_METRICS_SERVER_DIR=%q\n' "$DIR"
printf 'export PODLIFE_METRICS_SERVER_ADDRESS=%q\n' "$HOST_IP:$PORT"
