package admission

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// knownReasons are the reasons that get their own label value; any other
// reason is folded as the kubelet folds it, so that handlers with free-form
// reasons cannot blow up the metric's cardinality.
var knownReasons = map[string]bool{
	ReasonOutOfCPU:             true,
	ReasonOutOfMemory:          true,
	ReasonOutOfPods:            true,
	"OutOfephemeral-storage":   true,
	ReasonNodeShutdown:         true,
	"Evicted":                  true,
	"UnexpectedAdmissionError": true,
}

// reasonLabel is the kubelet's label for a rejection reason: known reasons
// as they are, other resource shortages as OutOfExtendedResources, the rest
// as Other.
func reasonLabel(reason string) string {
	switch {
	case knownReasons[reason]:
		return reason
	case strings.HasPrefix(reason, "OutOf"):
		return "OutOfExtendedResources"
	}
	return "Other"
}

// metrics holds the rejection counter; a nil *metrics records nothing.
type metrics struct {
	rejections *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "kubelet", Name: "admission_rejections_total",
		Help: "Cumulative number of pods rejected by local admission, by reason.",
	}, []string{"reason"})}
	reg.MustRegister(m.rejections)
	return m
}

func (m *metrics) rejected(reason string) {
	if m != nil {
		m.rejections.WithLabelValues(reasonLabel(reason)).Inc()
	}
}
