package kuberuntime

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Ephemeral containers (spec.ephemeralContainers), as the kubelet runs
// them (kuberuntime's computePodActions, EphemeralContainersToStart): the
// ephemeralcontainers subresource adds one to a running pod's spec, the
// update reaches SyncPod, and the sync starts each one that has no
// instance yet in the pod's sandbox (podplan plans which), before the
// init containers (so that a pod whose init container fails can be
// debugged). An ephemeral container runs once: it is never restarted,
// whatever its exit and the pod's restart policy, nor started again in a
// new sandbox; it stops with the pod. Validation refuses probes, ports, resources and lifecycle
// hooks on it; targetContainerName puts it in that container's PID
// namespace (CRI NamespaceOption Pid TARGET).

// ephemeralContainer is the pod's ephemeral container of that name as a
// Container (the API's own conversion: the fields are the same), or nil.
func ephemeralContainer(pod *v1.Pod, name string) (*v1.Container, *v1.EphemeralContainer) {
	for i := range pod.Spec.EphemeralContainers {
		if ec := &pod.Spec.EphemeralContainers[i]; ec.Name == name {
			return (*v1.Container)(&ec.EphemeralContainerCommon), ec
		}
	}
	return nil, nil
}

// targetNamespace puts ephemeral container c in the PID namespace of its
// target container's running instance, as the kubelet does (its
// getTargetID and generateLinuxContainerConfig): a target that does not
// run fails the container's creation; a pod whose containers share a PID
// namespace already (shareProcessNamespace, hostPID) keeps it. Other
// containers are left as they are.
func targetNamespace(ps *podSync, c *v1.Container, cfg *runtimeapi.ContainerConfig) error {
	_, ec := ephemeralContainer(ps.pod, c.Name)
	if ec == nil || ec.TargetContainerName == "" {
		return nil
	}
	target, _ := ps.rt.Latest(ps.sbID, ec.TargetContainerName)
	if target == nil || target.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return fmt.Errorf("unable to find target container %v", ec.TargetContainerName)
	}
	if cfg.Linux == nil {
		cfg.Linux = &runtimeapi.LinuxContainerConfig{}
	}
	if cfg.Linux.SecurityContext == nil {
		cfg.Linux.SecurityContext = &runtimeapi.LinuxContainerSecurityContext{}
	}
	if cfg.Linux.SecurityContext.NamespaceOptions == nil {
		cfg.Linux.SecurityContext.NamespaceOptions = &runtimeapi.NamespaceOption{}
	}
	if ns := cfg.Linux.SecurityContext.NamespaceOptions; ns.Pid == runtimeapi.NamespaceMode_CONTAINER {
		ns.Pid = runtimeapi.NamespaceMode_TARGET
		ns.TargetId = target.Id
	}
	return nil
}
