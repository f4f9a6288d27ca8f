package admission

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// engine fakes the engine's two queries from fixed sets of UIDs.
type engine struct{ terminated, requested map[types.UID]bool }

func (e engine) isKnownTerminated(uid types.UID) bool      { return e.terminated[uid] }
func (e engine) isTerminationRequested(uid types.UID) bool { return e.requested[uid] }

func TestActivePods(t *testing.T) {
	tests := []struct {
		name       string
		phase      v1.PodPhase // in the pod object
		cached     v1.PodPhase // from the phase func; "" means no phase func
		terminated bool        // the engine knows no container runs
		requested  bool        // the engine was asked to stop the pod
		active     bool
	}{
		{name: "running", phase: v1.PodRunning, active: true},
		{name: "pending", phase: v1.PodPending, active: true},
		{name: "no phase yet", active: true},
		{name: "unknown phase", phase: v1.PodUnknown, active: true},
		{name: "running, being stopped", phase: v1.PodRunning, requested: true, active: true},
		{name: "known terminated", phase: v1.PodRunning, requested: true, terminated: true},
		{name: "known terminated without a request", phase: v1.PodRunning, terminated: true},
		{name: "succeeded, never asked to stop", phase: v1.PodSucceeded},
		{name: "failed (rejected), never asked to stop", phase: v1.PodFailed},
		{name: "succeeded, containers still stopping", phase: v1.PodSucceeded, requested: true, active: true},
		{name: "failed, containers still stopping", phase: v1.PodFailed, requested: true, active: true},
		{name: "failed and terminated", phase: v1.PodFailed, requested: true, terminated: true},
		{name: "cache says failed before the object does", phase: v1.PodRunning, cached: v1.PodFailed},
		{name: "cache says running, object says failed", phase: v1.PodFailed, cached: v1.PodRunning, active: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := podOf("p")
			p.Status.Phase = tt.phase
			e := engine{
				terminated: map[types.UID]bool{p.UID: tt.terminated},
				requested:  map[types.UID]bool{p.UID: tt.requested},
			}
			var phase func(*v1.Pod) v1.PodPhase
			if tt.cached != "" {
				phase = func(*v1.Pod) v1.PodPhase { return tt.cached }
			}
			got := ActivePods([]*v1.Pod{p}, e.isKnownTerminated, e.isTerminationRequested, phase)
			if active := len(got) == 1; active != tt.active {
				t.Errorf("active = %v, want %v", active, tt.active)
			}
		})
	}
}

func TestActivePodsKeepsOrder(t *testing.T) {
	a, b, c, d := podOf("a"), podOf("b"), podOf("c"), podOf("d")
	c.Status.Phase = v1.PodSucceeded
	e := engine{terminated: map[types.UID]bool{"b": true}, requested: map[types.UID]bool{}}
	got := ActivePods([]*v1.Pod{d, c, b, a}, e.isKnownTerminated, e.isTerminationRequested, nil)
	if want := []*v1.Pod{d, a}; !slices.Equal(got, want) {
		t.Errorf("ActivePods = %v, want [d a]", names(got))
	}
}

func names(pods []*v1.Pod) []string {
	var n []string
	for _, p := range pods {
		n = append(n, p.Name)
	}
	return n
}
