#!/usr/bin/env bash
# Runs the upstream Kubernetes node conformance suite against podlife (or,
# as the reference, a kubelet) as the only node of a local cluster, and
# prints passed/failed/skipped with each failure's one-line reason, grouped
# by cause:
#
#   sudo tools/conformance.sh                      # podlife, the whole selection
#   sudo tools/conformance.sh --node kubelet       # the same against a kubelet
#   sudo tools/conformance.sh --ci                 # the sized part CI runs
#   tools/conformance.sh --list                    # the selection, no cluster
#   sudo tools/conformance.sh --suite node         # the node e2e suite's
#                                                  # (tools/node-e2e.sh)
#
# The selection: the specs of k8s.io/kubernetes/test/e2e (the release of
# tools/conformance/e2e/go.mod) labelled NodeConformance and none of Serial,
# Disruptive, Flaky, Slow or Feature:* (ginkgo --label-filter, see SELECTION).
# With --suite node, the same labels in the node e2e suite,
# k8s.io/kubernetes/test/e2e_node, and only its own specs (ginkgo
# --focus-file on their source, see NODE_SPECS): it imports those of
# test/e2e/common, which the e2e selection runs already. That suite runs
# against a node it did not start (--start-services=false) and expects that
# node set up as its own kubelet (test/e2e_node/services/kubelet.go), which
# this script does for podlife and the kubelet alike:
#   - the root directory /var/lib/kubelet (specs look there, e.g. for a mirror
#     pod's volumes): it must not exist yet, and is removed afterwards, so
#     one such run at a time per machine;
#   - /configz served through the API server's node proxy (nodes/proxy), for
#     the node's configuration (the static pod directory among it): without
#     it the suite fails every spec after 5 minutes;
#   - a static pod directory (NODE_STATIC_PODS of tools/node-lib.sh);
#   - the read-only endpoint on localhost:10255 and healthz on
#     127.0.0.1:10248 (NODE_LOCAL_PORTS): both ports must be free.
# It talks to the API server with a bearer token only (--host,
# --bearer-token): the token of a cluster-admin service account made here.
# The cluster domain is cluster.local (--dns-domain; podlife's default, and
# the kubelet's configuration of tools/node-lib.sh).
#
# What it does, in order, each step's output in the report directory:
#  1. builds e2e.test, ginkgo and agnhost (tools/conformance-build.sh,
#     cached), the control plane (tools/cluster-build.sh, cached) and podlife
#     (go build ./cmd/podlife) or takes the kubelet (cluster-build.sh's, else
#     conformance-build.sh --kubelet);
#  2. starts a private containerd (tools/containerd-up.sh) and imports the
#     test images (tools/conformance-images.sh);
#  3. starts the control plane (tools/cluster-up.sh);
#  4. starts the node with the node identity cluster-up.sh minted and waits
#     until its Node is Ready;
#  5. runs e2e.test through ginkgo in parallel (--procs), each spec with the
#     e2e framework's own timeouts, the whole run bounded by --timeout;
#  6. summarizes the JUnit report (tools/conformance/junitsum);
#  7. stops the node, the control plane and containerd, on success, failure
#     or interrupt.
#
# Options:
#   --suite e2e|node        test/e2e's selection (default) or test/e2e_node's
#   --node podlife|kubelet  the node under test (default podlife)
#   --focus REGEX           only the specs of the selection whose name matches
#   --ci                    the CI part: the specs of CI_FOCUS_SPECS below
#                           (NODE_CI_FOCUS_SPECS with --suite node; podlife
#                           passes them; minutes), --timeout 15m
#   --procs N               parallel ginkgo processes (default 4: on two cores
#                           the specs mostly wait for pods, not compute)
#   --timeout DURATION      the whole run's limit, a Go duration (default 90m);
#                           specs not started by then are reported as not run
#   --seed N                ginkgo's seed for the specs' random order (default:
#                           the time; the log says which): two runs cut by
#                           --timeout, one per node, reach about the same specs
#   --report DIR            where the logs and junit.xml go (default: a new
#                           directory under ${TMPDIR:-/tmp}); kept afterwards
#   --list                  print the selection (ginkgo --dry-run) and its
#                           count, and stop; needs no root and no cluster
#
# Environment: PODLIFE_CONTAINERD_BIN (a containerd of
# tools/containerd-build.sh instead of Debian's), PODLIFE_CONFORMANCE_CACHE,
# PODLIFE_CLUSTER_CACHE (the build caches).
#
# Exit status: 0 if every spec that ran passed, 1 otherwise, 2 on bad usage.
set -euo pipefail

tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$tools")"
TOOL=conformance
log() { echo "$TOOL: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}
# shellcheck source=tools/node-lib.sh
source "$tools/node-lib.sh"
usage() {
  log "usage: conformance.sh [--suite e2e|node] [--node podlife|kubelet] [--focus REGEX] [--ci] [--procs N] [--timeout DURATION] [--seed N] [--report DIR] [--list]"
  exit 2
}

# The selection, as ginkgo labels (the framework's WithNodeConformance,
# WithSerial, ..., WithFeature add both a label and the [Tag] in the name).
SELECTION='NodeConformance && !Serial && !Disruptive && !Flaky && !Slow && !/^Feature:/'
# The CI part: a few quick specs of each area podlife serves (termination
# messages, the lease, probes, security contexts, sysctls, Secrets and
# ConfigMaps in volumes and env, fsGroup, the pod's OS, readiness gates,
# restart rules, ephemeral containers, the hostname, the kubelet API's logs
# and exec), each measured passing in a full run, a few seconds each. Each
# is a regular expression on a spec's name.
CI_FOCUS_SPECS=(
  'Container Runtime blackbox test on terminated container should report termination message as empty when pod succeeds and TerminationMessagePolicy FallbackToLogsOnError is set'
  'Container Runtime blackbox test on terminated container should report termination message from log output if TerminationMessagePolicy FallbackToLogsOnError is set'
  'Container Runtime blackbox test on terminated container should report termination message from file when pod succeeds and TerminationMessagePolicy FallbackToLogsOnError is set'
  'NodeLease NodeLease should have OwnerReferences set'
  'Probing container should be restarted with a exec "cat /tmp/health" liveness probe'
  'Probing container with readiness probe that fails should never be ready and never restart'
  'Probing restartable init container should not be ready with an exec readiness probe timeout'
  'Security Context When creating a container with runAsNonRoot should not run without a specified user ID'
  'Security Context When creating a container with runAsUser should run the container with uid 65534'
  'Security Context when creating containers with AllowPrivilegeEscalation should not allow privilege escalation when false'
  'should support sysctls with slashes as separator'
  'Secrets should be consumable from pods in volume with mappings and Item Mode set'
  'ConfigMap should be consumable via environment variable'
  'Projected configMap should be consumable from pods in volume as non-root with FSGroup'
  'nonexistent volume subPath should have the correct mode and owner using FSGroup'
  'should reject pod when the node OS'
  'Pods should support pod readiness gates'
  'Container Restart Rules should restart container on rule match'
  'Ephemeral Containers will start an ephemeral container in an existing pod'
  'a pod with only hostnameOverride field will have hostnameOverride as hostname'
  'Kubelet when scheduling a busybox command in a pod should print the output to logs'
  'Pods should support remote command execution over websockets'
  'Pods should get a host IP'
  'Pods should contain environment variables for services'
)
CI_TIMEOUT=15m
# --suite node: e2e_node's own specs, by their source file's path (the
# binary records the module cache's, .../k8s.io/kubernetes@VERSION/test/...).
NODE_SPECS='/test/e2e_node/'
# Its CI part: container lifecycle specs (init containers in order,
# sidecars starting, restarting, replaced on an image change and stopped,
# SIGKILL's exit code), each group one pod of seconds, measured passing on
# podlife and the kubelet (--seed 20261127 runs). Regular expressions on a
# spec's name.
NODE_CI_FOCUS_SPECS=(
  'restartPolicy=Never, three init container and two restartable init containers'
  'restartPolicy=Never when a restartable init container runs continuously'
  'restartPolicy=Never when an Init container before restartable init container fails'
  'should launch init container serially before a regular container'
  'should terminate restartable init containers gracefully if there is a non-started restartable init container'
  'Pod SIGKILL'
)

suite=e2e node=podlife focus="" ci=false procs=4 timeout="" seed="" report="" list=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --suite | --node | --focus | --procs | --timeout | --seed | --report)
      [[ $# -ge 2 && -n "$2" ]] || { log "$1 needs a value"; usage; }
      case "$1" in
        --suite) suite="$2" ;;
        --node) node="$2" ;;
        --focus) focus="$2" ;;
        --procs) procs="$2" ;;
        --timeout) timeout="$2" ;;
        --seed) seed="$2" ;;
        --report) report="$2" ;;
      esac
      shift 2
      ;;
    --ci)
      ci=true
      shift
      ;;
    --list)
      list=true
      shift
      ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *) log "unknown argument $1"; usage ;;
  esac
done
case "$node" in
  podlife | kubelet) ;;
  *) log "--node must be podlife or kubelet, not $node"; usage ;;
esac
case "$suite" in
  e2e) suite_bin=e2e.test suite_args=(--provider local) ;;
  node) suite_bin=e2e_node.test suite_args=() ;;
  *) log "--suite must be e2e or node, not $suite"; usage ;;
esac
[[ "$procs" =~ ^[1-9][0-9]*$ ]] || { log "--procs must be a positive number, not $procs"; usage; }
[[ -z "$seed" || "$seed" =~ ^[0-9]+$ ]] || { log "--seed must be a number, not $seed"; usage; }
if $ci; then
  [[ -z "$focus" ]] || { log "--ci and --focus exclude each other"; usage; }
  if [[ "$suite" == node ]]; then
    focus="$(IFS='|'; echo "${NODE_CI_FOCUS_SPECS[*]}")"
  else
    focus="$(IFS='|'; echo "${CI_FOCUS_SPECS[*]}")"
  fi
  timeout="${timeout:-$CI_TIMEOUT}"
fi
timeout="${timeout:-90m}"
[[ "$timeout" =~ ^([0-9]+(\.[0-9]+)?(h|m|s))+$ ]] || { log "--timeout must be a Go duration (e.g. 90m), not $timeout"; usage; }

# --- build ----------------------------------------------------------------------
build_args=()
[[ "$node" != kubelet ]] || build_args+=(--kubelet)
[[ "$suite" != node ]] || build_args+=(--e2e-node)
CBIN="$("$tools/conformance-build.sh" "${build_args[@]}" | tail -n 1)"
ginkgo_select=()
[[ -z "$focus" ]] || ginkgo_select=(--focus "$focus")
[[ "$suite" != node ]] || ginkgo_select+=(--focus-file "$NODE_SPECS")
[[ -z "$seed" ]] || ginkgo_select+=(--seed "$seed")
ginkgo_run=("$CBIN/ginkgo" run --no-color --label-filter "$SELECTION" "${ginkgo_select[@]}")

# dry_run DIR: the selection's dry run, its JUnit report in DIR/dryrun.xml
# (every selected spec passed, every other skipped).
dry_run() {
  "${ginkgo_run[@]}" --dry-run --output-dir "$1" --junit-report dryrun.xml \
    "$CBIN/$suite_bin" -- "${suite_args[@]}" >"$1/dryrun.log" 2>&1 ||
    die "the dry run failed: $(tail -n 20 "$1/dryrun.log")"
}
# junitsum ARGS...: tools/conformance/junitsum.
junitsum() {
  (cd "$repo" && go run ./tools/conformance/junitsum "$@")
}

if $list; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  dry_run "$tmp"
  junitsum -list "$tmp/dryrun.xml"
  exit 0
fi

[[ $(id -u) -eq 0 ]] || die "must run as root (containerd and the node need it); try: sudo $0 $*"
if [[ -z "$report" ]]; then
  report="$(mktemp -d "${TMPDIR:-/tmp}/podlife-conformance.XXXXXX")"
fi
mkdir -p "$report"
report="$(cd "$report" && pwd)"
log "report directory: $report"

work="$(mktemp -d "${TMPDIR:-/tmp}/podlife-conformance-run.XXXXXX")"
chmod 0700 "$work"
containerd_dir="$work/containerd" cluster_dir="$work/cluster" node_pid=""
node_root="$work/node" made_node_root=false
cleanup() {
  local rc=$?
  set +e
  stop_node "$node"
  # The node's containers and mounts go with containerd.
  [[ ! -d "$containerd_dir" ]] || "$tools/containerd-down.sh" "$containerd_dir" >>"$report/teardown.log" 2>&1
  [[ ! -d "$cluster_dir" ]] || "$tools/cluster-down.sh" "$cluster_dir" >>"$report/teardown.log" 2>&1
  [[ ! -d "$node_root" ]] || umount_under "$node_root"
  if $made_node_root; then
    rm -rf "$node_root"
  fi
  rm -rf "$work"
  log "stopped everything it started; report in $report"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The node e2e suite's node: /var/lib/kubelet (made here, as a lock: mkdir
# fails if it exists) and the ports it dials.
if [[ "$suite" == node ]]; then
  for port in 10248 10255; do
    ! (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null ||
      die "port $port is in use: the node e2e suite's node needs it (another node on this machine?)"
  done
  mkdir /var/lib/kubelet 2>/dev/null ||
    die "/var/lib/kubelet exists: the node e2e suite's node needs it for itself (another node on this machine, or a leftover to remove)"
  node_root=/var/lib/kubelet made_node_root=true
fi

# --- containerd and images --------------------------------------------------------
log "starting containerd"
endpoint="$(PODLIFE_CONTAINERD_DIR="$containerd_dir" "$tools/containerd-up.sh" 2>"$report/containerd-up.log" | tail -n 1)" ||
  die "containerd-up.sh failed: $(tail -n 5 "$report/containerd-up.log")"
log "importing the test images"
"$tools/conformance-images.sh" --containerd "$containerd_dir" --bin "$CBIN" >/dev/null 2>"$report/images.log" ||
  die "conformance-images.sh failed: $(tail -n 5 "$report/images.log")"

# --- control plane ----------------------------------------------------------------
log "starting the control plane"
env_out="$(PODLIFE_CLUSTER_DIR="$cluster_dir" "$tools/cluster-up.sh" 2>"$report/cluster-up.log")" ||
  die "cluster-up.sh failed: $(tail -n 5 "$report/cluster-up.log")"
eval "$(grep '^export ' <<<"$env_out")"
kubectl=("$PODLIFE_CLUSTER_BIN/kubectl" --kubeconfig "$KUBECONFIG")

# --- the node -----------------------------------------------------------------------
if [[ "$node" == podlife ]]; then
  log "building podlife"
  (cd "$repo" && go build -o "$work/podlife" ./cmd/podlife)
  node_bin="$work/podlife"
else
  node_bin="$PODLIFE_CLUSTER_BIN/kubelet"
  [[ -x "$node_bin" ]] || node_bin="$CBIN/kubelet"
fi
if [[ "$suite" == node ]]; then
  NODE_STATIC_PODS="$work/static-pods" NODE_LOCAL_PORTS=true
  mkdir -p "$NODE_STATIC_PODS"
fi
start_node "$node" "$node_bin" "$endpoint" "$node_root" "$report/node.log"
log "waiting for node $PODLIFE_NODE_NAME ($node, pid $node_pid) to be Ready"
wait_node_ready "$node" "$report/node.log" 180
log "node $PODLIFE_NODE_NAME is Ready"

# The framework waits for each test namespace's `default` service account,
# which only a controller manager makes. An older cluster-up.sh runs none;
# then that check is off (pods there get no token either).
if [[ "$suite" == node ]]; then
  # The node e2e suite authenticates with a bearer token only: a
  # cluster-admin service account's, valid for the run.
  "${kubectl[@]}" -n kube-system create serviceaccount node-e2e >/dev/null
  "${kubectl[@]}" create clusterrolebinding node-e2e --clusterrole cluster-admin \
    --serviceaccount kube-system:node-e2e >/dev/null
  token="$("${kubectl[@]}" -n kube-system create token node-e2e --duration 24h)"
  host="$("${kubectl[@]}" config view --minify -o jsonpath='{.clusters[0].cluster.server}')"
  e2e_args=(--start-services=false --stop-services=false --prepull-images=false
    --host "$host" --bearer-token "$token" --node-name "$PODLIFE_NODE_NAME"
    --container-runtime-endpoint "$endpoint" --image-service-endpoint "$endpoint"
    --config-dir "$work/kubelet.conf.d" --report-dir "$report/e2e" --dns-domain cluster.local)
  mkdir -p "$work/kubelet.conf.d"
else
  e2e_args=(--provider local --kubeconfig "$KUBECONFIG" --report-dir "$report/e2e" --node-os-distro debian)
fi
sa_deadline=$((SECONDS + 60))
until [[ "$suite" == node ]] || "${kubectl[@]}" get serviceaccount default -n default >/dev/null 2>&1; do
  if [[ $SECONDS -ge $sa_deadline ]]; then
    log "no controller manager made the default service account: --e2e-verify-service-account=false"
    e2e_args+=(--e2e-verify-service-account=false)
    break
  fi
  sleep 1
done

# --- the suite -------------------------------------------------------------------------
dry_run "$report"
log "running the selection${focus:+ (focus: $focus)} on $node with $procs processes, at most $timeout; log: $report/ginkgo.log"
t0=$SECONDS
set +e
"${ginkgo_run[@]}" --procs "$procs" --timeout "$timeout" --poll-progress-after 10m \
  --output-dir "$report" --junit-report junit.xml \
  "$CBIN/$suite_bin" -- "${e2e_args[@]}" >"$report/ginkgo.log" 2>&1
ginkgo_rc=$?
set -e
log "ginkgo exited $ginkgo_rc after $(((SECONDS - t0) / 60))m$(((SECONDS - t0) % 60))s"
[[ -s "$report/junit.xml" ]] || die "no JUnit report; the end of $report/ginkgo.log: $(tail -n 30 "$report/ginkgo.log")"

set +e
junitsum -node "$node" -selection "$report/dryrun.xml" -tsv "$report/results.tsv" "$report/junit.xml" | tee "$report/summary.txt"
rc=${PIPESTATUS[0]}
set -e
exit "$rc"
