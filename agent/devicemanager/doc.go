// Package devicemanager is podlife's device manager: its kubelet
// counterpart is pkg/kubelet/cm/devicemanager (with its plugin/v1beta1
// registration server and plugin client). Device plugins register at the
// Registration service on <root dir>/device-plugins/kubelet.sock (API
// k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1); the manager asks each for
// its options, then follows its ListAndWatch stream.
//
// What it decides, in pure functions over its state (state.go,
// allocate.go, runopts.go):
//   - the Node's capacity and allocatable of each resource: capacity
//     counts every device, allocatable the healthy ones. A plugin gone, or
//     whose ListAndWatch ended, leaves its devices unhealthy (allocatable
//     0) and is not called again; endpointStopGracePeriod later the
//     resource is dropped and its capacity written as 0, as the kubelet
//     does.
//   - which free healthy devices each container of an admitted pod gets
//     (init containers' devices reused by the later containers), or the
//     kubelet's UnexpectedAdmissionError "Allocate failed due to ...".
//   - what a container's CRI config gets from its plugins' Allocate
//     answers: envs, mounts, device nodes, CDI devices and annotations.
//
// The gRPC shell (server.go) calls the plugins: Allocate once per container
// at its first creation, PreStartContainer before each creation when the
// plugin asks for it. Devices of pods that no longer hold node resources
// are freed (Sweep, and before each admission). The containers' statuses
// say their devices' health (allocatedResourcesStatus, podstatus.go).
//
// The allocations and the plugins' answers are kept in a checkpoint
// (checkpoint.go): a restarted agent hands no running pod's device to
// another pod; its first housekeeping sweep frees those of the pods gone.
//
// Under a root directory too deep for a unix socket path (107 bytes) the
// manager logs a warning and serves no registration socket: no plugin can
// register, and the agent runs on.
//
// Not done, unlike the kubelet: topology hints and GetPreferredAllocation
// (the first free healthy devices by ID are taken).
package devicemanager
