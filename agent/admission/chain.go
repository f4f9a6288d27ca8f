package admission

import (
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
)

// Chain runs handlers in order and returns the first rejection, as the
// kubelet's canAdmitPod does: later handlers never see a rejected pod, so
// the order decides which reason a pod that fails several checks gets.
// Every rejection is counted in kubelet_admission_rejections_total.
type Chain struct {
	handlers []Handler
	metrics  *metrics
}

// NewChain returns a chain of handlers whose rejections are counted on reg;
// a nil reg records no metrics.
func NewChain(reg prometheus.Registerer, handlers ...Handler) *Chain {
	return &Chain{handlers: handlers, metrics: newMetrics(reg)}
}

// Admit implements Handler, so that chains nest.
func (c *Chain) Admit(pod *v1.Pod, active []*v1.Pod) Result {
	r := Run(pod, active, c.handlers...)
	if !r.Admit {
		c.metrics.rejected(r.Reason)
	}
	return r
}

// Run runs handlers in order and returns the first rejection, or an
// admitting Result when every handler admits the pod (or there is none).
func Run(pod *v1.Pod, active []*v1.Pod, handlers ...Handler) Result {
	for _, h := range handlers {
		if r := h.Admit(pod, active); !r.Admit {
			return r
		}
	}
	return Result{Admit: true}
}
