package podstatus

import "github.com/prometheus/client_golang/prometheus"

// Results of a pod's status sync, the values of the syncs_total label.
const (
	resultWritten   = "written"   // the API status was patched
	resultUnchanged = "unchanged" // the API status already was the one to write
	resultNoMirror  = "no_mirror" // a static pod without a mirror pod yet
	resultPodGone   = "pod_gone"  // the API pod is gone or another pod holds its name
	resultFailed    = "failed"    // an API call failed; retried with back-off
)

// metrics count the API writer's work. They exist without a Registerer
// too, unregistered, so that the code never checks for nil.
type metrics struct {
	syncs     *prometheus.CounterVec
	deletions prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "podlife", Subsystem: "status_manager", Name: "syncs_total",
			Help: "Pod status syncs with the API server, by result: written, unchanged, no_mirror (static pod without a mirror pod yet), pod_gone (the API pod is gone or replaced), failed (retried).",
		}, []string{"result"}),
		deletions: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "podlife", Subsystem: "status_manager", Name: "pod_deletions_total",
			Help: "API pods deleted by the status manager once terminated, their deletion requested and their runtime removed.",
		}),
	}
	for _, r := range []string{resultWritten, resultUnchanged, resultNoMirror, resultPodGone, resultFailed} {
		m.syncs.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.syncs, m.deletions)
	}
	return m
}
