package kuberuntime

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/internal/crifake"
)

// The sync's status carries the stop signal of a container instance.
func TestSyncPodStatusStopSignal(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
	sig := v1.SIGTERM
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{StopSignal: &sig}
	h.mustSync(pod)
	st := h.statuses.last(t, pod.UID)
	if s := st.ContainerStatuses[0].StopSignal; s == nil || *s != v1.SIGTERM {
		t.Errorf("a's stop signal %v, want SIGTERM", s)
	}
	if s := st.ContainerStatuses[1].StopSignal; s != nil {
		t.Errorf("b's stop signal %v, want none (the fake reports none)", *s)
	}
}
