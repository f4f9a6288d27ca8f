// Package integration holds the node agent's integration tests, and only
// tests: real agents (agent.Agent, through agent/internal/agenttest) on a
// real CRI runtime and against a real Kubernetes control plane.
//
//   - The containerd tests (TestContainerd*: containerd_test.go and
//     *_containerd_test.go) run agents reading static pod manifests on
//     containerd: the acceptance list of the agent's issue (grace periods,
//     runtime restarts, orphans, node shutdown, restarts), and pod files,
//     probes, volumes, logs and an agent's exit. They skip unless
//     $PODLIFE_CRI_ENDPOINT names a runtime (internal/critest), and run one at
//     a time, each waiting until no other test's pod runs on it (an agent
//     kills the pods it does not know). TestContainerdRuntimeRestart
//     restarts containerd itself (tools/containerd-restart.sh), so it
//     needs one started by tools/containerd-up.sh.
//   - The cluster tests (TestCluster*, BenchmarkCluster*: cluster_test.go,
//     cluster_faults_test.go, cluster_bench_test.go, and on containerd
//     cluster_containerd_test.go) run agents as nodes of the control plane
//     of tools/cluster-up.sh (internal/clustertest). They skip unless
//     $PODLIFE_CLUSTER_DIR names it.
//
// .ci/run starts both before its test step (tools/containerd-up.sh,
// tools/cluster-up.sh) and exports their variables, so `go test ./...`
// runs them; it runs the containerd tests again on containerd v2.4.2. By
// hand:
//
//	ENDPOINT=$(tools/containerd-up.sh | tail -1)
//	PODLIFE_CRI_ENDPOINT=$ENDPOINT go test -race -count=1 -v -run Containerd ./agent/integration/
//	tools/containerd-down.sh "$ENDPOINT"
//
// The agent's own tests (package agent) run agents on the embedded
// runtime; one of them on containerd, TestContainerdLocalUserCannotStopNode,
// stays there, because it asks the agent whether a node shutdown was
// requested, which only the agent's tests can.
package integration
