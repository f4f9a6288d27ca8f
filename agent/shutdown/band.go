package shutdown

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
)

// killResult is one kill that returned, by the pod's index in its group.
type killResult struct {
	i   int
	err error
}

// runBand kills the group's pods concurrently and waits until every kill
// returned or the band's period elapsed, whichever comes first; a band
// without a period does not wait. It returns an error only when ctx ended
// (the band's own cancel runs only after it returned).
//
// The kills' context ends with the band: waiting for a pod the band gave up
// on helps no one, and the engine keeps stopping it anyway (the kill is
// latched in its record), so no goroutine outlives the band for longer than
// the Killer takes to notice.
func (m *Manager) runBand(ctx context.Context, g group, statusFn func(*v1.PodStatus)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var expired <-chan time.Time
	if g.Period > 0 {
		t := m.clock.NewTimer(g.Period)
		defer t.Stop()
		expired = t.C()
	}
	m.log.Info("Stopping pods of shutdown band", "priority", g.Priority, "period", g.Period, "pods", len(g.pods))
	// Buffered, so that kills returning after the band ended never block.
	results := make(chan killResult, len(g.pods))
	for i, pod := range g.pods {
		grace := gracePeriod(g.Band, pod)
		if m.rec != nil {
			m.rec.Eventf(pod, v1.EventTypeNormal, "NodeShutdown", "Stopping pod with a grace period of %d s as the node is shutting down", grace)
		}
		go func() {
			results <- killResult{i, m.killer.KillPod(ctx, pod, false, &grace, statusFn)}
		}()
	}
	if expired == nil {
		m.log.Info("Shutdown band has no period: not waiting for its pods", "priority", g.Priority)
		return ctx.Err()
	}
	pending := make([]bool, len(g.pods))
	for i := range pending {
		pending[i] = true
	}
	for left := len(g.pods); left > 0; left-- {
		select {
		case r := <-results:
			pending[r.i] = false
			if r.err != nil {
				m.log.Warn("Failed to stop pod for node shutdown", "pod", podName(g.pods[r.i]), "err", r.err)
			} else {
				m.log.Info("Pod stopped for node shutdown", "pod", podName(g.pods[r.i]))
			}
		case <-expired:
			var late []string
			for i, p := range pending {
				if p {
					late = append(late, podName(g.pods[i]))
				}
			}
			m.log.Warn("Shutdown band's period elapsed before its pods stopped; moving on", "priority", g.Priority, "period", g.Period, "pods", late)
			return ctx.Err()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// Kills return early when ctx ends: that must not pass for success.
	return ctx.Err()
}

// gracePeriod is the band's period in seconds, or the pod's own
// terminationGracePeriodSeconds when shorter: a shutdown never gives a pod
// more time than it asked for.
func gracePeriod(b Band, pod *v1.Pod) int64 {
	g := int64(b.Period / time.Second)
	if t := pod.Spec.TerminationGracePeriodSeconds; t != nil && *t < g {
		g = *t
	}
	return g
}

func podName(p *v1.Pod) string { return p.Namespace + "/" + p.Name }
