package kuberuntime

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
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
	if sig, ok := apiSignal(cur.GetStopSignal()); ok {
		return &sig
	}
	return nil
}

// apiSignal is the API's name of a CRI signal, runtimeSignal's inverse:
// SIGNAL_SIGRTMINPLUS1 is SIGRTMIN+1; RUNTIME_DEFAULT has none.
func apiSignal(sig runtimeapi.Signal) (v1.Signal, bool) {
	name, ok := runtimeapi.Signal_name[int32(sig)]
	if !ok || sig == runtimeapi.Signal_SIGNAL_RUNTIME_DEFAULT {
		return "", false
	}
	name = strings.TrimPrefix(name, "SIGNAL_")
	return v1.Signal(strings.NewReplacer("PLUS", "+", "MINUS", "-").Replace(name)), true
}
