package podplan

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/crifake"
)

// planInit's decisions with a sidecar's startup probe: a sidecar that
// runs but is not started holds back what comes after it, until the pod
// was initialized.
func TestHoldForStartup(t *testing.T) {
	sc := crifake.Init{Name: "sc", Sidecar: true}
	pod := func(inits ...crifake.Init) *v1.Pod {
		return crifake.WithInits(crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}), inits...)
	}
	for _, tc := range []struct {
		name            string
		pod             *v1.Pod
		rt              *cri.PodRuntime
		unstarted       []string // instances whose startup probe has not succeeded
		wantStart       []string
		wantInitialized bool
	}{
		{"a started sidecar lets the next start", pod(sc, crifake.Init{Name: "i1"}),
			crifake.RuntimePod(nil, crifake.Instance("sc", "s1", "sc", 0, crifake.Running, 0, 1)), nil, []string{"i1"}, false},
		{"a sidecar not started holds the next back", pod(sc, crifake.Init{Name: "i1"}),
			crifake.RuntimePod(nil, crifake.Instance("sc", "s1", "sc", 0, crifake.Running, 0, 1)), []string{"sc"}, nil, false},
		{"the last, a sidecar not started, holds the regular containers back", pod(crifake.Init{Name: "i1"}, sc),
			crifake.RuntimePod(nil, crifake.Instance("sc", "s1", "sc", 0, crifake.Running, 0, 2), crifake.Instance("i1", "s1", "i1", 0, crifake.Exited, 0, 1)),
			[]string{"sc"}, nil, false},
		{"an earlier sidecar restarted beside the held one", pod(sc, crifake.Init{Name: "sc2", Sidecar: true}, crifake.Init{Name: "i1"}),
			crifake.RuntimePod(nil, crifake.Instance("sc2", "s1", "sc2", 0, crifake.Running, 0, 2), crifake.Instance("sc", "s1", "sc", 0, crifake.Exited, 1, 1)),
			[]string{"sc2"}, []string{"sc"}, false},
		{"initialized: a sidecar not started again holds nothing back", pod(sc),
			crifake.RuntimePod(nil, crifake.Instance("sc", "s1", "sc", 1, crifake.Running, 0, 2), crifake.Instance("a0", "s1", "app", 0, crifake.Running, 0, 1)),
			[]string{"sc"}, nil, true},
		{"a regular init container that runs is unaffected", pod(crifake.Init{Name: "i1"}, sc),
			crifake.RuntimePod(nil, crifake.Instance("i1", "s1", "i1", 0, crifake.Running, 0, 1)), []string{"i1"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := func(_ *v1.Container, cur *runtimeapi.ContainerStatus) bool {
				return !slices.Contains(tc.unstarted, cur.Id)
			}
			plan := holdForStartup(tc.pod, tc.rt, "s1", planInit(tc.pod, tc.rt, "s1"), started)
			var names []string
			for _, c := range plan.start {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tc.wantStart) || plan.initialized != tc.wantInitialized {
				t.Errorf("plan: start %v, initialized %v; want %v, %v", names, plan.initialized, tc.wantStart, tc.wantInitialized)
			}
		})
	}
}
