package admission

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/agent/admission/podfields"
)

// PodFields rejects a pod that sets a field podlife refuses (see
// podfields): it is never run with less than its spec asks for. The
// message names every such field path with its reason.
func PodFields() Handler {
	return HandlerFunc(func(pod *v1.Pod, _ []*v1.Pod) Result {
		if refusals := podfields.Refusals(pod); len(refusals) > 0 {
			return Result{Reason: podfields.Reason, Message: podfields.Message(refusals)}
		}
		return Result{Admit: true}
	})
}
