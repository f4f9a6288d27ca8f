// Package container is the typed container lifecycle: what happens to one
// container of a pod, and the pod-level facts that gate it. Its states,
// events, record variables, guards and updates are generated from the
// container table in package spec (zz_generated.go); TLC checks the same
// table through tla/ContainerLifecycleTable.tla. It is the counterpart of
// the kubelet's kuberuntime computePodActions and
// computeInitContainerActions: which container to create, start, restart
// after its back-off, replace, kill and in which order, and which instances
// of a previous sandbox to remove.
//
// Fire is the only way to move a container's record: it picks the one row
// whose generated guard holds and applies its generated update.
package container
