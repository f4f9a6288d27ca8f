package cri

import v1 "k8s.io/api/core/v1"

// Helpers on a pod's spec that several of the cri packages need.

// IsSidecar reports whether init container c is a restartable init
// container: a sidecar, which runs beside the regular containers.
func IsSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// ContainerSpec is the pod's container or init container of that name, or
// nil.
func ContainerSpec(pod *v1.Pod, name string) *v1.Container {
	for _, cs := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}
