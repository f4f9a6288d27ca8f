package kuberuntime

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri/logs"
)

// ContainerLog finds the log of container (of pod's spec; "" when the pod
// has one container) in its latest instance, or the one before with
// previous, as the kubelet's /containerLogs does (logs.Lookup, under
// LogRoot).
func (s *Syncer) ContainerLog(ctx context.Context, pod *v1.Pod, container string, previous bool) (*logs.ContainerLog, error) {
	return logs.Lookup(ctx, s.rt, s.opts.LogRoot, pod, container, previous)
}
