package apistatus

import (
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

// statusStopSignal is the stop signal a container status reports
// (ContainerStatus.stopSignal): the container's lifecycle.stopSignal, else
// the one the runtime says the instance has (its image's), else none, as
// a runtime that does not report it (containerd 1.6) leaves it unknown.
func statusStopSignal(c *v1.Container, cur *runtimeapi.ContainerStatus) *v1.Signal {
	if l := c.Lifecycle; l != nil && l.StopSignal != nil {
		sig := *l.StopSignal
		return &sig
	}
	if sig, ok := cri.APISignal(cur.GetStopSignal()); ok {
		return &sig
	}
	return nil
}
