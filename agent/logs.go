package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/agent/server"
	"github.com/podlife/podlife/cri/logs"
)

// Container logs are served on the control socket (agent/server), which
// asks ContainerLog for them; runLogRotation rotates them.

// ContainerLog finds the log of a container of the admitted pod named
// namespace/name (the host's method of GET /containerLogs). Of two pods of that name (one waiting for the other's
// end), the first whose container has a log is taken.
func (a *Agent) ContainerLog(ctx context.Context, namespace, name, container string, previous bool) (*logs.ContainerLog, error) {
	a.mu.Lock()
	var pods []*v1.Pod
	var rejected []string
	for _, e := range a.pods {
		if e.pod.Namespace != namespace || e.pod.Name != name {
			continue
		}
		if e.rejection != nil {
			rejected = append(rejected, fmt.Sprintf("pod %s/%s (%s) was rejected at admission: %s", namespace, name, e.pod.UID, e.rejection.Message))
			continue
		}
		pods = append(pods, e.pod)
	}
	a.mu.Unlock()
	if len(pods) == 0 {
		if len(rejected) > 0 {
			return nil, server.NotFound(strings.Join(rejected, "; ") + ": it has no containers")
		}
		return nil, server.NotFound(fmt.Sprintf("pod %s/%s is not one of this agent's pods", namespace, name))
	}
	slices.SortFunc(pods, func(x, y *v1.Pod) int { return strings.Compare(string(x.UID), string(y.UID)) })
	var first error
	for _, p := range pods {
		log, err := a.syncer.ContainerLog(ctx, p, container, previous)
		if err == nil {
			return log, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// runLogRotation rotates the containers' logs every
// ContainerLogMonitorInterval until ctx ends.
func (a *Agent) runLogRotation(ctx context.Context) {
	tick := a.clock.NewTicker(a.cfg.ContainerLogMonitorInterval.Duration)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
		if err := a.rotator.Rotate(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("container log rotation", "err", err)
		}
	}
}
