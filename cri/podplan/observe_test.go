package podplan

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/fsm/container"
	"github.com/podlife/podlife/internal/crifake"
)

// render is an observation in short: "i1 ExitedSuccess gen1 Zero" and the
// gate ("after sc Running gen1 started", "first").
func render(o observed) string {
	s := fmt.Sprintf("%s %s gen%d %s", o.spec.Name, o.state, o.vars.Gen, o.vars.Code)
	if o.vars.Started {
		s += " started"
	}
	if o.failed {
		s += " failed:" + o.probe.String()
	}
	if o.specChanged {
		s += " changed"
	}
	s += fmt.Sprintf(" %s/%s", o.params.Kind, o.params.Policy)
	if o.params.Rule {
		s += "/rule"
	}
	if o.params.First {
		return s + " | first"
	}
	s += fmt.Sprintf(" | after %s %s gen%d", o.params.BeforeKind, o.params.BeforeState, o.params.BeforeGen)
	if o.params.BeforeStarted {
		s += " started"
	}
	return s
}

// decided is the pod's observation in the sandbox with the gates the
// courses read, as ComputePodActions makes it.
func decided(in *Input, sbID string, newSandbox bool) []observed {
	obs := in.observePod(sbID)
	in.courses(obs, len(in.Pod.Spec.InitContainers), newSandbox)
	return obs
}

// TestObserve: the runtime view as the container table sees it, one
// container per row.
func TestObserve(t *testing.T) {
	pod := func(policy v1.RestartPolicy, inits ...crifake.Init) *v1.Pod {
		return crifake.WithInits(crifake.MakePod("p", policy, crifake.Ctr{Name: "app"}), inits...)
	}
	sc, i1 := crifake.Init{Name: "sc", Sidecar: true}, crifake.Init{Name: "i1"}
	ruled := crifake.MakePod("p", never, crifake.Ctr{Name: "app", Restart: v1.ContainerRestartPolicyNever, Rules: crifake.RestartOn(42)})
	running := []*runtimeapi.PodSandbox{sandbox("s1", 1, true), sandbox("s0", 0, false)}
	for _, tc := range []struct {
		name       string
		pod        *v1.Pod
		sbID       string
		view       *cri.PodRuntime
		failed     map[string]prober.Kind
		notStarted map[string]bool
		container  string
		want       string
	}{
		{name: "no instance", pod: pod(always, i1), sbID: "s1", view: crifake.RuntimePod(running), container: "i1",
			want: "i1 NotCreated gen1 None Init/OnFailure | first"},
		{name: "an init container of the previous sandbox is stale", pod: pod(always, i1), sbID: "s1",
			view: crifake.RuntimePod(running, inst("i0", "s0", "i1", crifake.Exited, 0, 1)), container: "i1",
			want: "i1 ExitedSuccess gen0 Zero Init/OnFailure | first"},
		{name: "the regular container waits for the last init container", pod: pod(always, i1), sbID: "s1",
			view: crifake.RuntimePod(running, inst("i0", "s0", "i1", crifake.Exited, 0, 1)), container: "app",
			want: "app NotCreated gen1 None Regular/Always | after Init Running gen1"},
		{name: "a removed init container of an initialized sandbox completed", pod: pod(always, sc, i1), sbID: "s1",
			view: crifake.RuntimePod(running, inst("a1", "s1", "app", crifake.Exited, 1, 2), inst("c1", "s1", "sc", crifake.Running, 0, 1)), container: "i1",
			want: "i1 ExitedSuccess gen1 Zero Init/OnFailure | after Sidecar Running gen1 started"},
		{name: "a sidecar not past its startup probe", pod: pod(always, sc, i1), sbID: "s1",
			view: crifake.RuntimePod(running, inst("c1", "s1", "sc", crifake.Running, 0, 1)), notStarted: map[string]bool{"c1": true}, container: "i1",
			want: "i1 NotCreated gen1 None Init/OnFailure | after Sidecar Running gen1"},
		{name: "a failed startup probe: not started", pod: pod(always), sbID: "s1",
			view: crifake.RuntimePod(running, inst("a1", "s1", "app", crifake.Running, 0, 1)), failed: map[string]prober.Kind{"a1": prober.Startup}, container: "app",
			want: "app Running gen1 None failed:Startup Regular/Always | first"},
		{name: "a changed spec", pod: pod(never), sbID: "s1",
			view: crifake.RuntimePod(running, withHash(inst("a1", "s1", "app", crifake.Running, 0, 1), "old")), container: "app",
			want: "app Running gen1 None started changed Regular/Never | first"},
		{name: "an exit code a rule restarts on", pod: ruled, sbID: "s1",
			view: crifake.RuntimePod(running, inst("a1", "s1", "app", crifake.Exited, 42, 1)), container: "app",
			want: "app ExitedFailure gen1 Rule Regular/Never/rule | first"},
		{name: "another exit code", pod: ruled, sbID: "s1",
			view: crifake.RuntimePod(running, inst("a1", "s1", "app", crifake.Exited, 1, 1)), container: "app",
			want: "app ExitedFailure gen1 Other Regular/Never/rule | first"},
		{name: "a regular container that completed for good counts in a new sandbox", pod: pod(onFailure), sbID: pendingSandbox,
			view: crifake.RuntimePod(running[1:], inst("a0", "s0", "app", crifake.Exited, 0, 1)), container: "app",
			want: "app ExitedSuccess gen1 Zero Regular/OnFailure | first"},
		{name: "one that restarts is stale", pod: pod(onFailure), sbID: pendingSandbox,
			view: crifake.RuntimePod(running[1:], inst("a0", "s0", "app", crifake.Exited, 1, 1)), container: "app",
			want: "app ExitedFailure gen0 Other Regular/OnFailure | first"},
		{name: "a previous sandbox's running instance", pod: pod(always), sbID: pendingSandbox,
			view: crifake.RuntimePod(running[1:], inst("a0", "s0", "app", crifake.Running, 0, 1)), container: "app",
			want: "app Running gen0 None Regular/Always | first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &Input{Pod: tc.pod, View: tc.view, Now: time.Unix(100, 0),
				Started:     func(_ *v1.Container, cur *runtimeapi.ContainerStatus) bool { return !tc.notStarted[cur.Id] },
				FailedProbe: func(id string) (prober.Kind, bool) { k, ok := tc.failed[id]; return k, ok },
				Backoff:     func(string, time.Time) time.Duration { return 0 },
			}
			for _, o := range decided(in, tc.sbID, tc.sbID == pendingSandbox) {
				if o.spec.Name == tc.container {
					if got := render(o); got != tc.want {
						t.Errorf("observed\n got %s\nwant %s", got, tc.want)
					}
					return
				}
			}
			t.Fatalf("no container %s observed", tc.container)
		})
	}
}

// The policy the table reads restarts exactly when the kubelet's rules
// do, for every kind of spec and exit code.
func TestObservedPolicyMatchesTheKubelet(t *testing.T) {
	policies := []v1.RestartPolicy{always, onFailure, never}
	own := []v1.ContainerRestartPolicy{"", v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever}
	for _, pp := range policies {
		for _, cp := range own {
			for _, rules := range [][]v1.ContainerRestartRule{nil, crifake.RestartOn(3)} {
				pod := crifake.MakePod("p", pp, crifake.Ctr{Name: "app", Restart: cp, Rules: rules})
				c := &pod.Spec.Containers[0]
				for _, code := range []int32{0, 1, 3} {
					v := container.Vars{Gen: currentGen, Code: exitCode(c, code)}
					p := container.Params{Kind: container.ContainerKindRegular, Policy: policyOf(&pod.Spec, c, container.ContainerKindRegular), Rule: hasRestartRule(c), Sandbox: currentGen}
					if got, want := container.PolicyRestarts(container.ExitedFailure, v, p), cri.ContainerShouldRestart(&pod.Spec, c, code); got != want {
						t.Errorf("pod %s, container %q, rules %v, exit %d: the table restarts %v, the kubelet %v", pp, cp, rules != nil, code, got, want)
					}
				}
			}
		}
	}
}
