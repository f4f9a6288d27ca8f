package shutdown

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the kubelet's shutdown gauges; a nil *metrics records nothing.
type metrics struct {
	start, end prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{
		start: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "graceful_shutdown_start_time_seconds",
			Help: "Last graceful node shutdown start time, in seconds since the Unix epoch.",
		}),
		end: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "graceful_shutdown_end_time_seconds",
			Help: "Last graceful node shutdown end time, in seconds since the Unix epoch.",
		}),
	}
	reg.MustRegister(m.start, m.end)
	return m
}

func (m *metrics) started(t time.Time) {
	if m != nil {
		m.start.Set(float64(t.Unix()))
	}
}

func (m *metrics) ended(t time.Time) {
	if m != nil {
		m.end.Set(float64(t.Unix()))
	}
}
