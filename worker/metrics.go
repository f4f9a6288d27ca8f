package worker

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/fsm"
)

// metrics are the engine's Prometheus metrics, with the kubelet's names and
// labels (semantics §5) plus podlife's transition counters. A nil
// *metrics records nothing.
type metrics struct {
	workingPods     *prometheus.GaugeVec
	restartedPods   *prometheus.CounterVec
	orphanedRuntime prometheus.Counter
	workerDuration  *prometheus.HistogramVec
	transitions     *prometheus.CounterVec
	rejections      *prometheus.CounterVec
	syncPanics      *prometheus.CounterVec
	// byRow caches each row's transition counter: labels are resolved
	// once, not on every transition.
	byRow map[string]prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{
		workingPods: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "working_pods",
			Help: "Number of pods the pod workers own, by lifecycle phase, config and static, as of the last SyncKnownPods.",
		}, []string{"lifecycle", "config", "static"}),
		restartedPods: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "restarted_pods_total",
			Help: "Number of pods whose finished record was removed so that the same UID could start again.",
		}, []string{"static"}),
		orphanedRuntime: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "orphaned_runtime_pods_total",
			Help: "Number of pods found in the container runtime that the pod workers did not know.",
		}),
		workerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pod_worker_duration_seconds",
			Help:    "Time from an update's StartTime until the pod worker finished processing it.",
			Buckets: prometheus.DefBuckets,
		}, []string{"operation_type"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podlife_transitions_total",
			Help: "Transitions of the lifecycle table that fired, by source state, event and target state.",
		}, []string{"from", "event", "to"}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podlife_guard_rejections_total",
			Help: "Worker events the lifecycle table rejected (a nonzero value is a bug).",
		}, []string{"state", "event"}),
		syncPanics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podlife_sync_panics_total",
			Help: "Sync calls that panicked, by sync function (each is retried as a failed sync, after a growing back-off).",
		}, []string{"function"}),
		byRow: map[string]prometheus.Counter{},
	}
	reg.MustRegister(m.workingPods, m.restartedPods, m.orphanedRuntime, m.workerDuration, m.transitions, m.rejections, m.syncPanics)
	return m
}

// observers combines the metrics with the embedder's observer.
func observers(m *metrics, obs fsm.Observer) fsm.Observer {
	switch {
	case m == nil:
		return obs
	case obs == nil:
		return m
	}
	return fsm.Observers{m, obs}
}

func (m *metrics) Transition(t fsm.Transition) {
	c, ok := m.byRow[t.Row]
	if !ok {
		c = m.transitions.WithLabelValues(t.From.String(), t.Event.String(), t.To.String())
		m.byRow[t.Row] = c
	}
	c.Inc()
}

func (m *metrics) Rejected(_ types.UID, s fsm.State, ev fsm.Event, _ error) {
	m.rejections.WithLabelValues(s.String(), ev.String()).Inc()
}

func staticLabel(static bool) string {
	if static {
		return "true"
	}
	return ""
}

func (m *metrics) restarted(static bool) {
	if m != nil {
		m.restartedPods.WithLabelValues(staticLabel(static)).Inc()
	}
}

func (m *metrics) orphanedRuntimePod() {
	if m != nil {
		m.orphanedRuntime.Inc()
	}
}

func (m *metrics) syncPanicked(f fsm.InFlight) {
	if m != nil {
		m.syncPanics.WithLabelValues(f.String()).Inc()
	}
}

func (m *metrics) observeDuration(op string, start time.Time, clk clock.PassiveClock) {
	if m != nil && !start.IsZero() {
		m.workerDuration.WithLabelValues(op).Observe(clk.Since(start).Seconds())
	}
}

// workingPods writes all 15 valid (lifecycle, config, static) series.
func (m *metrics) setWorkingPods(pods map[types.UID]PodWorkerSync) {
	if m == nil {
		return
	}
	type key struct {
		state          PodWorkerState
		config, static string
	}
	counts := map[key]int{}
	for _, s := range pods {
		k := key{state: s.State, config: "desired", static: staticLabel(s.Static)}
		switch {
		case !s.HasConfig:
			k.config, k.static = "runtime_only", "unknown"
		case s.Orphan:
			k.config = "orphan"
		}
		counts[k]++
	}
	for _, st := range []PodWorkerState{SyncPod, TerminatingPod, TerminatedPod} {
		for _, cs := range [][2]string{{"desired", "true"}, {"desired", ""}, {"orphan", "true"}, {"orphan", ""}, {"runtime_only", "unknown"}} {
			m.workingPods.WithLabelValues(st.String(), cs[0], cs[1]).Set(float64(counts[key{st, cs[0], cs[1]}]))
		}
	}
}
