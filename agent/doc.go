// Package agent is the podlife node agent's composition root and the glue
// between its parts and the pod lifecycle engine (worker): its kubelet
// counterpart is pkg/kubelet's Kubelet type. New prepares the root
// directory, connects to the CRI runtime (or starts the embedded one),
// joins the cluster when a kubeconfig is given (bootstrapping its client
// certificate first when a bootstrap kubeconfig is given), builds the
// engine and its status manager, prober, admission chain and node shutdown
// manager, and listens with agent/server; Run runs them until its context
// ends (SIGTERM, SIGINT: the pods keep running for the next agent) or a
// node shutdown asked for by hand completes. With shutdown grace periods,
// Run also holds systemd-logind's inhibitor lock (logind.go) and runs the
// node shutdown logind announces.
//
// What the root does itself: the root directory's checks; the pods of its sources (manifests and, in cluster mode, the API
// server), admitted or rejected, handed to the engine; housekeeping, which
// reconciles the engine with the sources and the runtime (orphans,
// restarts, the pod gauges); the runtime poll that resyncs changed pods,
// as the kubelet's pod lifecycle event generator does; the probes' results,
// events, metrics and the engine's transition log; the node's resources;
// and the answers of agent/server's HostInterface (Lifecycle, PodList,
// HealthProblem, ContainerLog, RequestShutdown, ShutdownPlan) and of
// agent/kubeletserver's Host (exec, attach, port-forward and run in an
// admitted pod, through the syncer).
//
// Its subpackages:
//   - admission: the local admission chain (resources, node shutdown).
//   - api: the wire types of the endpoints (Lifecycle, PodInfo, ...), their
//     paths and default addresses; what clients link instead of the agent.
//   - apisource: the API server as a second pod source (cluster mode).
//   - certificate: the node's client certificate (bootstrap with a
//     bootstrap token, rotation) and serving certificate from the CSR API.
//   - client: the control socket's client (ShutdownNode, ContainerLogs).
//   - config: the configuration (config.Config, the file kind
//     AgentConfiguration, the flags' defaults, validation, and what is
//     derived from it).
//   - kubeletserver: the kubelet API on config.Config.Port (HTTPS, authenticated
//     and authorized as the kubelet's: logs, exec, attach, port-forward,
//     pods, metrics, stats); kubeletapi.go builds its authentication from
//     the configuration and answers its Host.
//   - configmap: the ConfigMaps projected volumes show, read with the
//     node's identity and kept for a sync period (cluster mode).
//   - demo: the demo verb's scripted scenario on the embedded runtime.
//   - devicemanager: the device plugins (registration socket, their
//     devices in the Node's resources, admission and the containers'
//     allocations); devices.go wires it in.
//   - manifests: the static pod manifests of a directory.
//   - mirror: the mirror pods of the static pods (cluster mode).
//   - node: the Node object and its Lease (cluster mode).
//   - podstatus: the status manager, which keeps and writes pod statuses.
//   - services: the cluster's Services, watched for the Service
//     variables of the containers' env (cluster mode).
//   - server: the read-only TCP endpoint and the control socket.
//   - shutdown: graceful node shutdown, band by band; shutdown/logind: the
//     node shutdown announced by systemd-logind over D-Bus.
//   - token: the pods' service account tokens, requested through the
//     TokenRequest API, bound to their pods and refreshed (cluster mode).
//
// And for tests: integration, the tests of agents on containerd and in a
// cluster (tests only); internal/agenttest, the test agents they and the
// root's own tests run. (The module's internal/logindtest is a private
// dbus-daemon with a systemd-logind stand-in.)
package agent
