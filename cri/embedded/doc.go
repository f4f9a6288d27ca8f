// Package embedded is the agent's default container runtime when no
// --runtime-endpoint is given: an in-process CRI server on a unix socket, so
// the agent runs anywhere, without containerd or root.
//
// It serves the fake runtime and image services of k8s.io/cri-client/pkg/fake
// (k8s.io/cri-api/pkg/apis/testing) on a gRPC server of its own, whose
// interceptors make the fake fit for a long-running agent and for scripting:
//
//   - Calls are serialised, so each check below and the fake's own action are
//     one step.
//   - The fake records every call in Called forever (and PullImage in a
//     private list): a leak for an agent. The record is cleared after every
//     call, and pulls are answered here, so nothing grows with time.
//   - A panic of the fake (it dereferences nil configs and image specs) becomes
//     an Internal error instead of ending the agent.
//   - InjectError makes the next call of any CRI method fail once;
//     ExitContainer makes a running container end by itself.
//   - Lifecycle rules the fake lacks but a real runtime (containerd) enforces,
//     so the agent's mistakes show here too: a sandbox or container name
//     (metadata name and attempt) is used once (the fake would silently
//     replace the old one); a container is created in an existing sandbox
//     and started once, from CREATED, in a READY sandbox; unknown IDs are
//     NotFound; stopping a container that does not run is a no-op;
//     StopPodSandbox kills the sandbox's running containers (exit code 137)
//     and RemovePodSandbox removes its containers.
//
// What it does not do:
//
//   - Containers do not really run: no process, image, filesystem, network,
//     log, exec, attach, port-forward or probe. Start is instant and a
//     container runs until it is stopped or ExitContainer ends it.
//   - Stops are instant: StopContainer ignores the timeout and the container
//     exits with code 0, reason "Completed", as if it honoured SIGTERM.
//   - Images: no image is present at first; PullImage succeeds at once for
//     any name and makes it present (ImageStatus, ListImages), 1 MiB in
//     size. Creating a container does not check its image. Pull failures
//     are scripted with InjectError("PullImage", ...).
//   - No container events: GetContainerEvents ends at once, so clients poll.
//   - Stats and metrics are empty; every sandbox has the IP 192.168.192.168.
//   - State is in memory: it is lost on Stop, and a restarted agent finds no
//     pods of its previous run.
//   - Sandbox and container IDs are not random but derived from their
//     metadata (name_namespace_uid_attempt and sandboxID_name_attempt).
//   - The fake's package imports "testing" and testify, which the agent's
//     binary therefore carries.
package embedded
