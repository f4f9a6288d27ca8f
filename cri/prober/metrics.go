package prober

import (
	"github.com/prometheus/client_golang/prometheus"
)

// probeTotal is the kubelet's prober_probe_total (pkg/kubelet/prober's
// ProberResults, served on /metrics/probes): every probe run, by kind and
// outcome; a container's series go with its probes.
type probeTotal struct{ vec *prometheus.CounterVec }

func newProbeTotal(reg prometheus.Registerer) *probeTotal {
	if reg == nil {
		return nil
	}
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "prober_probe_total",
		Help: "Cumulative number of a liveness, readiness or startup probe for a container by result.",
	}, []string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"})
	reg.MustRegister(vec)
	return &probeTotal{vec: vec}
}

// resultLabel is the kubelet's result label of a run.
func resultLabel(res Result, err error) string {
	switch {
	case err != nil:
		return "unknown"
	case res == Success:
		return "successful"
	case res == Failure:
		return "failed"
	}
	return "unknown"
}

// observe counts one run of w's probe.
func (p *probeTotal) observe(w *worker, res Result, err error) {
	if p == nil {
		return
	}
	t := w.cp.target
	p.vec.WithLabelValues(w.kind.String(), resultLabel(res, err), t.Container.Name, t.Pod.Name, t.Pod.Namespace, string(t.Pod.UID)).Inc()
}

// forget drops the series of w's probe.
func (p *probeTotal) forget(w *worker) {
	if p == nil {
		return
	}
	t := w.cp.target
	p.vec.DeletePartialMatch(prometheus.Labels{"probe_type": w.kind.String(), "container": t.Container.Name, "pod_uid": string(t.Pod.UID)})
}
