package podstatus

import (
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// readiness is a ProbeResults whose one verdict, ready or not, the test
// sets: it sets the pod's Ready condition and its containers' ready.
type readiness struct {
	mu    sync.Mutex
	ready bool
}

func (r *readiness) set(b bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ready = b
}

func (r *readiness) Apply(_ *v1.Pod, st *v1.PodStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	status := v1.ConditionFalse
	if r.ready {
		status = v1.ConditionTrue
	}
	for i := range st.ContainerStatuses {
		st.ContainerStatuses[i].Ready = r.ready
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1.PodReady {
			st.Conditions[i].Status = status
		}
	}
}

// The probes' results apply to every status recorded, and a change of
// them reaches the recorded status without a new one (while the pod's
// sync is blocked in a long stop), with its transition time.
func TestProbesChanged(t *testing.T) {
	clk := clocktesting.NewFakeClock(now.Time)
	probes := &readiness{}
	m, err := New(Config{Clock: clk, Probes: probes})
	if err != nil {
		t.Fatal(err)
	}
	pod := localPod("a", nil)
	m.ProbesChanged(pod.UID) // nothing recorded yet: nothing to do
	m.SetPodStatus(pod, v1.PodStatus{
		Phase:             v1.PodRunning,
		Conditions:        []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}},
		ContainerStatuses: []v1.ContainerStatus{{Name: "app", Ready: true}},
	})
	ready := func(want bool, since time.Time) {
		t.Helper()
		st, _ := m.Get(pod.UID)
		c := st.Conditions[0]
		if st.ContainerStatuses[0].Ready != want || (c.Status == v1.ConditionTrue) != want || !c.LastTransitionTime.Time.Equal(since) {
			t.Errorf("ready %v, Ready %s since %v; want %v since %v", st.ContainerStatuses[0].Ready, c.Status, c.LastTransitionTime, want, since)
		}
	}
	ready(false, now.Time)
	clk.Step(time.Minute)
	probes.set(true)
	m.ProbesChanged(pod.UID)
	ready(true, now.Add(time.Minute))
	clk.Step(time.Minute)
	m.ProbesChanged(pod.UID) // no change: the transition time stays
	ready(true, now.Add(time.Minute))
	probes.set(false)
	m.ProbesChanged(pod.UID)
	ready(false, now.Add(2*time.Minute))
}
