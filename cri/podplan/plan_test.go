package podplan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/internal/crifake"
)

const (
	always    = v1.RestartPolicyAlways
	onFailure = v1.RestartPolicyOnFailure
	never     = v1.RestartPolicyNever
)

// sandbox is a sandbox of the view: ready or not, created at attempt.
func sandbox(id string, attempt uint32, ready bool) *runtimeapi.PodSandbox {
	st := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	if ready {
		st = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	return &runtimeapi.PodSandbox{Id: id, State: st, CreatedAt: int64(attempt + 1),
		Metadata: &runtimeapi.PodSandboxMetadata{Attempt: attempt}}
}

// inst is an instance for crifake.RuntimePod, named id, attempt 0.
func inst(id, sb, name string, state runtimeapi.ContainerState, exit int32, createdAt int64) func() (*runtimeapi.ContainerStatus, string) {
	return crifake.Instance(id, sb, name, 0, state, exit, createdAt)
}

// withHash is instance f created from a spec whose hash was hash.
func withHash(f func() (*runtimeapi.ContainerStatus, string), hash string) func() (*runtimeapi.ContainerStatus, string) {
	return func() (*runtimeapi.ContainerStatus, string) {
		c, sb := f()
		c.Annotations = map[string]string{cri.ContainerHashAnnotation: hash}
		return c, sb
	}
}

// summary renders a plan as one line: what the rows of
// TestComputePodActions expect.
func summary(a Actions) string {
	if a.Terminal {
		return "terminal: " + a.Why
	}
	var parts []string
	if a.CreateSandbox {
		s := fmt.Sprintf("new sandbox %d (%s)", a.SandboxAttempt, a.Why)
		for _, c := range a.KillPrevious {
			s += " kill " + c.Id
		}
		parts = append(parts, s)
	} else {
		parts = append(parts, "sandbox "+a.SandboxID)
	}
	if len(a.Ignored) > 0 {
		parts = append(parts, "ignore "+strings.Join(a.Ignored, ","))
	}
	for _, g := range []struct {
		what string
		as   []ContainerAction
	}{{"ephemeral", a.Ephemeral}, {"init", a.Init}, {"", nil}, {"containers", a.Containers}} {
		if g.what == "" && a.Initialized {
			parts = append(parts, "initialized")
		}
		if len(g.as) == 0 {
			continue
		}
		var s []string
		for _, act := range g.as {
			x := act.String()
			if act.Then == ThenBackOff {
				x += fmt.Sprintf(" [%s: %s]", act.Wait.Reason, act.Wait.Message)
			}
			s = append(s, x)
		}
		parts = append(parts, g.what+": "+strings.Join(s, "; "))
	}
	return strings.Join(parts, " | ")
}

// TestComputePodActions: one row per situation a sync meets, with the
// plan it must make; the kubelet bugs of issue 29 are rows of their own
// (named by their kubernetes/kubernetes issue).
func TestComputePodActions(t *testing.T) {
	app := crifake.Ctr{Name: "app"}
	pod := func(policy v1.RestartPolicy, inits ...crifake.Init) *v1.Pod {
		return crifake.WithInits(crifake.MakePod("p", policy, app), inits...)
	}
	sc, i1, i2 := crifake.Init{Name: "sc", Sidecar: true}, crifake.Init{Name: "i1"}, crifake.Init{Name: "i2"}
	withEphemeral := func(p *v1.Pod) *v1.Pod {
		p.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "dbg", Image: "img"}}}
		return p
	}
	s0, s1 := sandbox("s0", 0, false), sandbox("s1", 1, true)
	dead := []*runtimeapi.PodSandbox{s0}
	both := []*runtimeapi.PodSandbox{s1, s0}
	running := []*runtimeapi.PodSandbox{sandbox("s0", 0, true)}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		view *cri.PodRuntime
		// failed are the probe failures by instance ID, backoff the
		// back-off left by container name, notStarted the running
		// instances not past their startup probe.
		failed     map[string]prober.Kind
		backoff    map[string]time.Duration
		notStarted map[string]bool
		want       string
	}{
		// The sandbox.
		{name: "a new pod gets a sandbox and its first init container",
			pod: pod(always, i1, i2), view: crifake.RuntimePod(nil),
			want: "new sandbox 0 (no sandbox yet) | init: i1 create"},
		{name: "a new pod without init containers gets its containers",
			pod: pod(always), view: crifake.RuntimePod(nil),
			want: "new sandbox 0 (no sandbox yet) | initialized | containers: app create"},
		{name: "a dead sandbox is replaced after its containers are stopped",
			pod: pod(always), view: crifake.RuntimePod(dead, inst("a0", "s0", "app", crifake.Running, 0, 1)),
			want: "new sandbox 1 (sandbox s0 is not ready) kill a0 | ignore a0 | initialized | containers: app create"},
		{name: "a Never pod whose sandbox died after its containers ran is over",
			pod: pod(never), view: crifake.RuntimePod(dead, inst("a0", "s0", "app", crifake.Exited, 1, 1)),
			want: "terminal: sandbox died; the pod runs once"},
		{name: "an Always pod whose containers completed is not over when its sandbox dies",
			pod: pod(always), view: crifake.RuntimePod(dead, inst("a0", "s0", "app", crifake.Exited, 0, 1)),
			want: "new sandbox 1 (sandbox s0 is not ready) | ignore a0 | initialized | containers: app create"},
		{name: "an OnFailure pod whose containers succeeded is over when its sandbox dies",
			pod: pod(onFailure), view: crifake.RuntimePod(dead, inst("a0", "s0", "app", crifake.Exited, 0, 1)),
			want: "terminal: sandbox died; every container completed"},
		{name: "kubernetes#79398: a Never pod whose sandbox died before any container gets a new one",
			pod: pod(never), view: crifake.RuntimePod(dead),
			want: "new sandbox 1 (sandbox s0 is not ready) | initialized | containers: app create"},

		// Regular containers.
		{name: "a running pod needs nothing",
			pod: pod(always), view: crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Running, 0, 1)),
			want: "sandbox s0 | initialized"},
		{name: "an exited container restarts",
			pod: pod(always), view: crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Exited, 1, 1)),
			want: "sandbox s0 | initialized | containers: app restart"},
		{name: "an exited container in back-off waits",
			pod: pod(always), view: crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Exited, 1, 1)),
			backoff: map[string]time.Duration{"app": 20 * time.Second},
			want:    "sandbox s0 | initialized | containers: app back-off [CrashLoopBackOff: back-off 20s restarting failed container=app pod=p]"},
		{name: "an OnFailure container that succeeded is not restarted",
			pod:  crifake.MakePod("p", onFailure, app, crifake.Ctr{Name: "b"}),
			view: crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Exited, 0, 2), inst("b0", "s0", "b", crifake.Running, 0, 1)),
			want: "sandbox s0 | initialized"},
		{name: "a created container is started",
			pod: pod(always), view: crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Created, 0, 1)),
			want: "sandbox s0 | initialized | containers: app start"},
		{name: "a container whose spec changed is replaced",
			pod: pod(always), view: crifake.RuntimePod(running, withHash(inst("a0", "s0", "app", crifake.Running, 0, 1), "old")),
			want: "sandbox s0 | initialized | containers: kill(spec changed) app create"},
		{name: "a failed liveness probe kills and restarts",
			pod: pod(always), view: crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Running, 0, 1)),
			failed: map[string]prober.Kind{"a0": prober.Liveness},
			want:   "sandbox s0 | initialized | containers: kill(probe liveness) app restart"},
		{name: "a failed startup probe in back-off kills, then waits",
			pod: pod(always), view: crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Running, 0, 1)),
			failed: map[string]prober.Kind{"a0": prober.Startup}, backoff: map[string]time.Duration{"app": 10 * time.Second},
			want: "sandbox s0 | initialized | containers: kill(probe startup) app back-off [CrashLoopBackOff: back-off 10s restarting failed container=app pod=p]"},
		{name: "a failed liveness probe under Never kills only",
			pod:    crifake.MakePod("p", never, app, crifake.Ctr{Name: "b"}),
			view:   crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Running, 0, 2), inst("b0", "s0", "b", crifake.Running, 0, 1)),
			failed: map[string]prober.Kind{"a0": prober.Liveness},
			want:   "sandbox s0 | initialized | containers: kill(probe liveness) app"},
		{name: "an ephemeral container without an instance starts",
			pod: withEphemeral(pod(always)), view: crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Running, 0, 1)),
			want: "sandbox s0 | ephemeral: dbg create | initialized"},
		{name: "an ephemeral container that ran never runs again",
			pod:  withEphemeral(pod(always)),
			view: crifake.RuntimePod(running, inst("d0", "s0", "dbg", crifake.Exited, 0, 2), inst("a0", "s0", "app", crifake.Running, 0, 1)),
			want: "sandbox s0 | initialized"},
		{name: "a new sandbox gets no ephemeral container",
			pod: withEphemeral(pod(always)), view: crifake.RuntimePod(dead),
			want: "new sandbox 1 (sandbox s0 is not ready) | initialized | containers: app create"},

		// Init containers and sidecars.
		{name: "a failed init container under Never ends the pod",
			pod: pod(never, i1), view: crifake.RuntimePod(running, inst("i0", "s0", "i1", crifake.Exited, 1, 1)),
			want: "terminal: an init container failed"},
		{name: "a failed init container under OnFailure restarts",
			pod: pod(onFailure, i1), view: crifake.RuntimePod(running, inst("i0", "s0", "i1", crifake.Exited, 1, 1)),
			want: "sandbox s0 | init: i1 restart"},
		{name: "the next init container starts after one succeeded",
			pod: pod(always, i1, i2), view: crifake.RuntimePod(running, inst("i0", "s0", "i1", crifake.Exited, 0, 1)),
			want: "sandbox s0 | init: i2 create"},
		{name: "a sidecar not past its startup probe holds the next init container",
			pod: pod(always, sc, i1), view: crifake.RuntimePod(running, inst("c0", "s0", "sc", crifake.Running, 0, 1)),
			notStarted: map[string]bool{"c0": true},
			want:       "sandbox s0"},
		{name: "a sidecar that exited restarts beside the regular containers",
			pod:  pod(always, sc),
			view: crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Running, 0, 2), inst("c0", "s0", "sc", crifake.Exited, 1, 1)),
			want: "sandbox s0 | init: sc restart | initialized"},
		{name: "a sidecar whose liveness probe failed is killed and restarted",
			pod:    pod(always, sc),
			view:   crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Running, 0, 2), inst("c0", "s0", "sc", crifake.Running, 0, 1)),
			failed: map[string]prober.Kind{"c0": prober.Liveness},
			want:   "sandbox s0 | init: kill(probe liveness) sc restart | initialized"},
		{name: "a running sidecar whose image changed is replaced",
			pod:  pod(always, sc),
			view: crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Running, 0, 2), withHash(inst("c0", "s0", "sc", crifake.Running, 0, 1), "old")),
			want: "sandbox s0 | init: kill(spec changed) sc create | initialized"},

		// The kubelet's bugs.
		{name: "kubernetes#136969/#137146: with a sidecar running, a crashed regular container restarts",
			// i1's instance is gone (garbage-collected): the init
			// containers' turns cannot be read back, but the regular
			// container ran in this sandbox, so the pod was initialized.
			pod:  pod(always, sc, i1),
			view: crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Exited, 1, 3), inst("c0", "s0", "sc", crifake.Running, 0, 1)),
			want: "sandbox s0 | initialized | containers: app restart"},
		{name: "kubernetes#137710: after a reboot, the old sandbox's exited init container does not skip the init containers",
			pod:  pod(always, i1),
			view: crifake.RuntimePod(dead, inst("a0", "s0", "app", crifake.Exited, 255, 2), inst("i0", "s0", "i1", crifake.Exited, 0, 1)),
			want: "new sandbox 1 (sandbox s0 is not ready) | ignore a0,i0 | init: i1 create"},
		{name: "kubernetes#49505: a new sandbox runs the init containers again",
			pod: pod(always, i1, i2),
			view: crifake.RuntimePod(both, inst("a0", "s0", "app", crifake.Exited, 137, 3),
				inst("j0", "s0", "i2", crifake.Exited, 0, 2), inst("i0", "s0", "i1", crifake.Exited, 0, 1)),
			want: "sandbox s1 | ignore a0,j0,i0 | init: i1 create"},
		{name: "kubernetes#140309/#140364: the old sandbox's created main container does not cut the init containers short",
			pod: pod(always, i1, i2),
			view: crifake.RuntimePod(both, inst("i1", "s1", "i1", crifake.Exited, 0, 4), inst("a0", "s0", "app", crifake.Created, 0, 3),
				inst("j0", "s0", "i2", crifake.Exited, 0, 2), inst("i0", "s0", "i1", crifake.Exited, 0, 1)),
			want: "sandbox s1 | ignore a0,j0,i0 | init: i2 create"},
		{name: "kubernetes#120247: after a sandbox change the sidecar starts first, the regular containers wait",
			pod: pod(always, sc, i1),
			view: crifake.RuntimePod(dead, inst("a0", "s0", "app", crifake.Running, 0, 3),
				inst("i0", "s0", "i1", crifake.Exited, 0, 2), inst("c0", "s0", "sc", crifake.Running, 0, 1)),
			want: "new sandbox 1 (sandbox s0 is not ready) kill a0 kill c0 | ignore a0,i0,c0 | init: sc create"},
		{name: "kubernetes#120247: in the new sandbox the init container follows the sidecar, not the regular container",
			pod: pod(always, sc, i1),
			view: crifake.RuntimePod(both, inst("c1", "s1", "sc", crifake.Running, 0, 4), inst("a0", "s0", "app", crifake.Exited, 137, 3),
				inst("i0", "s0", "i1", crifake.Exited, 0, 2), inst("c0", "s0", "sc", crifake.Exited, 137, 1)),
			want: "sandbox s1 | ignore a0,i0,c0 | init: i1 create"},
		{name: "kubernetes#126543: an init container stuck in Created is started",
			pod: pod(always, i1, i2), view: crifake.RuntimePod(running, inst("i0", "s0", "i1", crifake.Created, 0, 1)),
			want: "sandbox s0 | init: i1 start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &Input{
				Pod: tc.pod, View: tc.view, Now: time.Unix(100, 0),
				Started: func(_ *v1.Container, cur *runtimeapi.ContainerStatus) bool { return !tc.notStarted[cur.Id] },
				FailedProbe: func(id string) (prober.Kind, bool) {
					k, ok := tc.failed[id]
					return k, ok
				},
				Backoff: func(name string, _ time.Time) time.Duration { return tc.backoff[name] },
			}
			if got := summary(ComputePodActions(in)); got != tc.want {
				t.Errorf("plan:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestActionRows: an action's reason is the container table's rows its
// course fired, in order.
func TestActionRows(t *testing.T) {
	app := crifake.Ctr{Name: "app"}
	running := []*runtimeapi.PodSandbox{sandbox("s1", 1, true), sandbox("s0", 0, false)}
	for _, tc := range []struct {
		name    string
		pod     *v1.Pod
		view    *cri.PodRuntime
		failed  map[string]prober.Kind
		backoff time.Duration
		want    string
	}{
		{name: "create", pod: crifake.MakePod("p", always, app), view: crifake.RuntimePod(running),
			want: "app create: NotCreatedStart CreatedBegin"},
		{name: "a previous sandbox's instance is purged first", pod: crifake.MakePod("p", always, app),
			view: crifake.RuntimePod(running, inst("a0", "s0", "app", crifake.Exited, 1, 1)),
			want: "app create: ExitedFailurePurge NotCreatedStart CreatedBegin"},
		{name: "restart after the back-off", pod: crifake.MakePod("p", always, app),
			view: crifake.RuntimePod(running, inst("a1", "s1", "app", crifake.Exited, 1, 1)),
			want: "app restart: ExitedFailureRestart BackOffBackoffDone CreatedBegin"},
		{name: "wait in back-off", pod: crifake.MakePod("p", always, app), backoff: time.Second,
			view: crifake.RuntimePod(running, inst("a1", "s1", "app", crifake.Exited, 1, 1)),
			want: "app back-off: ExitedFailureRestart"},
		{name: "a failed startup probe", pod: crifake.MakePod("p", always, app), failed: map[string]prober.Kind{"a1": prober.Startup},
			view: crifake.RuntimePod(running, inst("a1", "s1", "app", crifake.Running, 0, 1)),
			want: "kill(probe startup) app restart: RunningStartupFail ExitedFailureRestart BackOffBackoffDone CreatedBegin"},
		{name: "a changed spec", pod: crifake.MakePod("p", never, app),
			view: crifake.RuntimePod(running, withHash(inst("a1", "s1", "app", crifake.Running, 0, 1), "old")),
			want: "kill(spec changed) app create: RunningSpecChange ExitedFailureReplace CreatedBegin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &Input{Pod: tc.pod, View: tc.view, Now: time.Unix(100, 0),
				Started:     func(*v1.Container, *runtimeapi.ContainerStatus) bool { return true },
				FailedProbe: func(id string) (prober.Kind, bool) { k, ok := tc.failed[id]; return k, ok },
				Backoff:     func(string, time.Time) time.Duration { return tc.backoff },
			}
			a := ComputePodActions(in)
			if len(a.Containers) != 1 {
				t.Fatalf("plan %s: want one container action", summary(a))
			}
			if got := a.Containers[0].String() + ": " + strings.Join(a.Containers[0].Rows, " "); got != tc.want {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
		})
	}
}
