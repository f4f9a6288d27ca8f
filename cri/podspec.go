package cri

import v1 "k8s.io/api/core/v1"

// Helpers on a pod's spec that several of the cri packages need.

// IsSidecar reports whether init container c is a restartable init
// container: a sidecar, which runs beside the regular containers.
func IsSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}
