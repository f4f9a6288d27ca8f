package agent

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/kubetypes"
)

// podGauges are the pod counts housekeeping sets (semantics §5).
type podGauges struct {
	desired *prometheus.GaugeVec
	active  *prometheus.GaugeVec
	mirror  prometheus.Gauge
}

func newPodGauges(reg prometheus.Registerer) *podGauges {
	g := &podGauges{
		desired: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "desired_pods",
			Help: "The number of pods the kubelet is being instructed to run. static is true if the pod is not from the apiserver.",
		}, []string{"static"}),
		active: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "active_pods",
			Help: "The number of pods the kubelet considers active and which are being considered when admitting new pods. static is true if the pod is not from the apiserver.",
		}, []string{"static"}),
		mirror: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "mirror_pods",
			Help: "The number of mirror pods the kubelet will try to create (one per admitted static pod not terminating). Always 0 without an API server.",
		}),
	}
	reg.MustRegister(g.desired, g.active, g.mirror)
	return g
}

// set writes every label combination, so a count that fell to 0 shows 0.
func (g *podGauges) set(desired, active []*v1.Pod) {
	for _, c := range []struct {
		vec  *prometheus.GaugeVec
		pods []*v1.Pod
	}{{g.desired, desired}, {g.active, active}} {
		var static, other float64
		for _, p := range c.pods {
			if kubetypes.IsStatic(p) {
				static++
			} else {
				other++
			}
		}
		c.vec.WithLabelValues("true").Set(static)
		c.vec.WithLabelValues("").Set(other)
	}
}

// newLaneWait registers podlife_cri_lane_wait_seconds, how long CRI calls
// waited for a slot of their lane (cri.Lanes), and returns its observer:
// a lane whose waits grow is full.
func newLaneWait(reg prometheus.Registerer) func(lane string, wait time.Duration) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "podlife", Subsystem: "cri", Name: "lane_wait_seconds",
		Help:    "How long CRI calls waited for a slot of their lane (kill, sandbox_stop, exec, pull, change, read, poll).",
		Buckets: []float64{.0001, .001, .01, .1, .5, 1, 2.5, 5, 10, 30, 60, 120},
	}, []string{"lane"})
	reg.MustRegister(h)
	return func(lane string, wait time.Duration) { h.WithLabelValues(lane).Observe(wait.Seconds()) }
}
