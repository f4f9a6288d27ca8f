// Package embedded is the agent's default container runtime when no
// --runtime-endpoint is given: an in-process CRI server on a unix socket, so
// the agent runs anywhere, without containerd or root. The kubelet has no
// counterpart: this stands in for the CRI runtime (containerd, CRI-O) that a
// kubelet talks to.
//
// It is podlife's own implementation of the CRI runtime and image services
// (k8s.io/cri-api/pkg/apis/runtime/v1), with its state in memory, served on
// a gRPC server of its own:
//
//   - Calls are serialised: each runs alone, with its checks, and holds no
//     record of earlier calls.
//   - A panic in a call becomes an Internal error instead of ending the
//     agent.
//   - InjectError makes the next call of any CRI method fail once;
//     ExitContainer makes a running container end by itself.
//   - Lifecycle rules a real runtime (containerd) enforces, so the agent's
//     mistakes show here too: a sandbox or container name (metadata name
//     and attempt) is used once; a container is created in an existing
//     sandbox and started once, from CREATED, in a READY sandbox; unknown
//     IDs are NotFound; stopping a container that does not run is a no-op;
//     StopPodSandbox kills the sandbox's running containers (exit code 137,
//     reason "Error") and RemovePodSandbox removes its containers.
//   - Version names it podlife-embedded; Status reports RuntimeReady and
//     NetworkReady.
//
// What it does not do:
//
//   - Containers do not really run: no process, image, filesystem, network,
//     log, attach or port-forward. Start is instant and a container runs
//     until it is stopped or ExitContainer ends it. ExecSync in a running
//     container succeeds at once with exit code 0 and no output, so exec
//     hooks and probes pass.
//   - Stops are instant: StopContainer ignores the timeout and the container
//     exits with code 0, reason "Completed", as if it honoured SIGTERM.
//   - Images: no image is present at first; PullImage succeeds at once for
//     any name and makes it present (ImageStatus, ListImages), 1 MiB in
//     size, until RemoveImage. Creating a container does not check its
//     image. ImageFsInfo reports no filesystem. Pull failures are scripted
//     with InjectError("PullImage", ...).
//   - No container events: GetContainerEvents ends at once, so clients poll.
//   - Every sandbox has the IP 192.168.192.168; container statuses have no
//     log path or mounts.
//   - State is in memory: it is lost on Stop, and a restarted agent finds no
//     pods of its previous run.
//   - Sandbox and container IDs are not random but derived from their
//     metadata (name_namespace_uid_attempt and sandboxID_name_attempt).
//   - What the agent does not call and a runtime without processes cannot
//     honour fails with Unimplemented, naming the method: Exec, Attach,
//     PortForward, ReopenContainerLog, UpdateContainerResources,
//     UpdatePodSandboxResources, UpdateRuntimeConfig, RuntimeConfig, stats
//     and metrics, checkpoint and restore.
package embedded
