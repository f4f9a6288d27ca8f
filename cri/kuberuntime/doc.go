// Package kuberuntime runs pods on a Container Runtime Interface (CRI)
// runtime (kubelet: pkg/kubelet/kuberuntime): the Syncer, a
// worker.PodSyncer that creates the sandbox and containers of a pod from
// their configs, runs its init containers in turn, restarts exited
// containers as the restart policy says (with crash-loop and image pull
// back-offs), kills containers for their probes or a changed spec, stops a
// pod within its grace period in the kubelet's termination order with its
// preStop hooks, and removes what the runtime holds of a pod once it is
// deleted. Each SyncPod reads the runtime once, has cri/podplan decide
// from that view (computePodActions) and applies the plan in numbered
// steps, returning why containers wait as data. It writes every pod status it generates to a StatusWriter. It
// applies the pods' security contexts (cri/securitycontext) and runs their
// sandboxes with their RuntimeClass's handler; a pod or container that
// asks for isolation it cannot apply here (a user namespace, an unknown
// security-context field) it refuses with CreateContainerConfigError.
package kuberuntime
