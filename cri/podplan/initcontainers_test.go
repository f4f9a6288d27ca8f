package podplan

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/crifake"
)

// planInit's decisions, from runtime fixtures.
func TestPlanInit(t *testing.T) {
	sc := crifake.Init{Name: "sc", Sidecar: true}
	pod := func(policy v1.RestartPolicy, inits ...crifake.Init) *v1.Pod {
		return crifake.WithInits(crifake.MakePod("p", policy, crifake.Ctr{Name: "app"}), inits...)
	}
	two := []crifake.Init{{Name: "i1"}, {Name: "i2"}}
	for _, tc := range []struct {
		name            string
		pod             *v1.Pod
		rt              *cri.PodRuntime
		wantStart       []string
		wantInitialized bool
		wantFailed      bool
	}{
		{"no init containers", pod(always), crifake.RuntimePod(nil), nil, true, false},
		{"nothing ran", pod(always, two...), crifake.RuntimePod(nil), []string{"i1"}, false, false},
		{"the first runs", pod(always, two...), crifake.RuntimePod(nil, crifake.Instance("i1", "s1", "i1", 0, crifake.Running, 0, 1)), nil, false, false},
		{"the first only created", pod(always, two...), crifake.RuntimePod(nil, crifake.Instance("i1", "s1", "i1", 0, crifake.Created, 0, 1)), []string{"i1"}, false, false},
		{"the first succeeded", pod(always, two...), crifake.RuntimePod(nil, crifake.Instance("i1", "s1", "i1", 0, crifake.Exited, 0, 1)), []string{"i2"}, false, false},
		{"the first failed", pod(onFailure, two...), crifake.RuntimePod(nil, crifake.Instance("i1", "s1", "i1", 0, crifake.Exited, 1, 1)), []string{"i1"}, false, false},
		{"the first failed, Never", pod(never, two...), crifake.RuntimePod(nil, crifake.Instance("i1", "s1", "i1", 0, crifake.Exited, 1, 1)), nil, false, true},
		{"all succeeded", pod(never, two...),
			crifake.RuntimePod(nil, crifake.Instance("i2", "s1", "i2", 0, crifake.Exited, 0, 2), crifake.Instance("i1", "s1", "i1", 0, crifake.Exited, 0, 1)), nil, true, false},
		{"succeeded in an earlier sandbox only", pod(onFailure, two...),
			crifake.RuntimePod(nil, crifake.Instance("i2", "s0", "i2", 0, crifake.Exited, 0, 2), crifake.Instance("i1", "s0", "i1", 0, crifake.Exited, 0, 1)), []string{"i1"}, false, false},
		{"a regular container ran: initialized, even without init instances", pod(always, two...),
			crifake.RuntimePod(nil, crifake.Instance("a0", "s1", "app", 0, crifake.Exited, 1, 1)), nil, true, false},
		{"a sidecar that runs lets the next start", pod(always, sc, crifake.Init{Name: "i1"}),
			crifake.RuntimePod(nil, crifake.Instance("sc", "s1", "sc", 0, crifake.Running, 0, 1)), []string{"i1"}, false, false},
		{"a sidecar only created is started", pod(never, sc, crifake.Init{Name: "i1"}),
			crifake.RuntimePod(nil, crifake.Instance("sc", "s1", "sc", 0, crifake.Created, 0, 1)), []string{"sc"}, false, false},
		{"a sidecar that exited before its successor ran is restarted first", pod(never, sc, crifake.Init{Name: "i1"}),
			crifake.RuntimePod(nil, crifake.Instance("sc", "s1", "sc", 0, crifake.Exited, 0, 1)), []string{"sc"}, false, false},
		{"a sidecar that exited later is restarted beside its successor", pod(never, sc, crifake.Init{Name: "i1"}),
			crifake.RuntimePod(nil, crifake.Instance("i1", "s1", "i1", 0, crifake.Exited, 0, 2), crifake.Instance("sc", "s1", "sc", 0, crifake.Exited, 0, 1)), []string{"sc"}, true, false},
		{"a sidecar that exited, then the next started", pod(never, sc, crifake.Init{Name: "i1"}, crifake.Init{Name: "i2"}),
			crifake.RuntimePod(nil, crifake.Instance("i1", "s1", "i1", 0, crifake.Exited, 0, 2), crifake.Instance("sc", "s1", "sc", 0, crifake.Exited, 0, 1)), []string{"sc", "i2"}, false, false},
		{"the last, a sidecar, runs", pod(always, crifake.Init{Name: "i1"}, sc),
			crifake.RuntimePod(nil, crifake.Instance("sc", "s1", "sc", 0, crifake.Running, 0, 2), crifake.Instance("i1", "s1", "i1", 0, crifake.Exited, 0, 1)), nil, true, false},
		{"initialized: a removed sidecar is started again", pod(always, sc),
			crifake.RuntimePod(nil, crifake.Instance("a0", "s1", "app", 0, crifake.Running, 0, 1)), []string{"sc"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := planInit(tc.pod, tc.rt, "s1")
			var names []string
			for _, c := range plan.start {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tc.wantStart) || plan.initialized != tc.wantInitialized {
				t.Errorf("plan: start %v, initialized %v; want %v, %v", names, plan.initialized, tc.wantStart, tc.wantInitialized)
			}
			if got := initFailed(tc.pod, tc.rt, "s1"); got != tc.wantFailed {
				t.Errorf("initFailed = %v, want %v", got, tc.wantFailed)
			}
		})
	}
}
