package apistatus

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/crifake"
)

func TestFinished(t *testing.T) {
	two := func(policy v1.RestartPolicy) *v1.Pod {
		return crifake.MakePod("p", policy, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
	}
	ctrs := func(policy v1.RestartPolicy, cs ...crifake.Ctr) *v1.Pod { return crifake.MakePod("p", policy, cs...) }
	// exited: a and b exited in s1 with these codes.
	exited := func(a, b int32) *cri.PodRuntime {
		return crifake.RuntimePod(nil, crifake.Instance("a0", "s1", "a", 0, crifake.Exited, a, 2), crifake.Instance("b0", "s1", "b", 0, crifake.Exited, b, 1))
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		rt   *cri.PodRuntime
		want bool
	}{
		{"Always never finishes", two(v1.RestartPolicyAlways),
			crifake.RuntimePod(nil, crifake.Instance("a0", "s1", "a", 0, crifake.Exited, 0, 2), crifake.Instance("b0", "s1", "b", 0, crifake.Exited, 0, 1)), false},
		{"no containers in the spec", crifake.MakePod("p", v1.RestartPolicyNever), crifake.RuntimePod(nil), false},
		{"Never, all exited", two(v1.RestartPolicyNever),
			crifake.RuntimePod(nil, crifake.Instance("a0", "s1", "a", 0, crifake.Exited, 1, 2), crifake.Instance("b0", "s1", "b", 0, crifake.Exited, 0, 1)), true},
		{"Never, one running", two(v1.RestartPolicyNever),
			crifake.RuntimePod(nil, crifake.Instance("a0", "s1", "a", 0, crifake.Exited, 0, 2), crifake.Instance("b0", "s1", "b", 0, crifake.Running, 0, 1)), false},
		{"Never, one not created", two(v1.RestartPolicyNever),
			crifake.RuntimePod(nil, crifake.Instance("a0", "s1", "a", 0, crifake.Exited, 0, 2)), false},
		{"Never, one only created", two(v1.RestartPolicyNever),
			crifake.RuntimePod(nil, crifake.Instance("a0", "s1", "a", 0, crifake.Exited, 0, 2), crifake.Instance("b0", "s1", "b", 0, crifake.Created, 0, 1)), false},
		{"OnFailure, all succeeded", two(v1.RestartPolicyOnFailure),
			crifake.RuntimePod(nil, crifake.Instance("a1", "s1", "a", 1, crifake.Exited, 0, 3), crifake.Instance("b0", "s1", "b", 0, crifake.Exited, 0, 2), crifake.Instance("a0", "s1", "a", 0, crifake.Exited, 1, 1)), true},
		{"OnFailure, newest failed", two(v1.RestartPolicyOnFailure),
			crifake.RuntimePod(nil, crifake.Instance("a1", "s1", "a", 1, crifake.Exited, 1, 3), crifake.Instance("b0", "s1", "b", 0, crifake.Exited, 0, 2), crifake.Instance("a0", "s1", "a", 0, crifake.Exited, 0, 1)), false},
		{"Never, exited in another sandbox: not run again", two(v1.RestartPolicyNever),
			crifake.RuntimePod(nil, crifake.Instance("a0", "s0", "a", 0, crifake.Exited, 0, 2), crifake.Instance("b0", "s1", "b", 0, crifake.Exited, 0, 1)), true},
		{"Always, failed in another sandbox", two(v1.RestartPolicyAlways),
			crifake.RuntimePod(nil, crifake.Instance("a0", "s0", "a", 0, crifake.Exited, 1, 2), crifake.Instance("b0", "s1", "b", 0, crifake.Exited, 0, 1)), false},
		{"OnFailure, succeeded in an earlier sandbox", two(v1.RestartPolicyOnFailure),
			crifake.RuntimePod(nil, crifake.Instance("b1", "s1", "b", 1, crifake.Exited, 0, 3), crifake.Instance("a0", "s0", "a", 0, crifake.Exited, 0, 2), crifake.Instance("b0", "s0", "b", 0, crifake.Exited, 1, 1)), true},
		{"OnFailure, failed in an earlier sandbox", two(v1.RestartPolicyOnFailure),
			crifake.RuntimePod(nil, crifake.Instance("b1", "s1", "b", 1, crifake.Exited, 0, 3), crifake.Instance("a0", "s0", "a", 0, crifake.Exited, 1, 2)), false},

		// Containers with a restart policy of their own.
		{"Always pod, Never containers exited", ctrs(v1.RestartPolicyAlways, crifake.Ctr{Name: "a", Restart: v1.ContainerRestartPolicyNever}, crifake.Ctr{Name: "b", Restart: v1.ContainerRestartPolicyNever}),
			exited(1, 0), true},
		{"Always pod, one Never container, the other the pod's", ctrs(v1.RestartPolicyAlways, crifake.Ctr{Name: "a", Restart: v1.ContainerRestartPolicyNever}, crifake.Ctr{Name: "b"}),
			exited(1, 0), false},
		{"Never pod, an Always container", ctrs(v1.RestartPolicyNever, crifake.Ctr{Name: "a", Restart: v1.ContainerRestartPolicyAlways}, crifake.Ctr{Name: "b"}),
			exited(0, 0), false},
		{"Always pod, OnFailure containers succeeded", ctrs(v1.RestartPolicyAlways, crifake.Ctr{Name: "a", Restart: v1.ContainerRestartPolicyOnFailure}, crifake.Ctr{Name: "b", Restart: v1.ContainerRestartPolicyOnFailure}),
			exited(0, 0), true},
		{"Always pod, OnFailure container failed", ctrs(v1.RestartPolicyAlways, crifake.Ctr{Name: "a", Restart: v1.ContainerRestartPolicyOnFailure}, crifake.Ctr{Name: "b", Restart: v1.ContainerRestartPolicyNever}),
			exited(3, 0), false},
		{"rule matches: restarts", ctrs(v1.RestartPolicyNever, crifake.Ctr{Name: "a", Restart: v1.ContainerRestartPolicyNever, Rules: crifake.RestartOn(42)}, crifake.Ctr{Name: "b"}),
			exited(42, 0), false},
		{"rule does not match: done", ctrs(v1.RestartPolicyNever, crifake.Ctr{Name: "a", Restart: v1.ContainerRestartPolicyNever, Rules: crifake.RestartOn(42)}, crifake.Ctr{Name: "b"}),
			exited(1, 0), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Finished(tc.pod, tc.rt, "s1"); got != tc.want {
				t.Errorf("finished = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGenerateStatus(t *testing.T) {
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"}, crifake.Ctr{Name: "c"})
	sandboxes := []*runtimeapi.PodSandbox{{Id: "s1", CreatedAt: 2000}, {Id: "s0", CreatedAt: 1000}}
	rt := crifake.RuntimePod(sandboxes,
		crifake.Instance("a1", "s1", "a", 1, crifake.Exited, 2, 30),
		crifake.Instance("b0", "s1", "b", 0, crifake.Running, 0, 20),
		crifake.Instance("a0", "s1", "a", 0, crifake.Exited, 1, 10),
	)
	waits := []Waiting{
		{Container: "c", Reason: "ContainerCreating"},
		{Container: "a", Reason: "CrashLoopBackOff", Message: "back-off"},
		{Container: "c", Reason: "ErrImagePull", Message: "no such image"},
	}

	st := Generate(Input{Pod: pod, Runtime: rt, SandboxID: "s1", PodIP: "10.0.0.1", Waits: waits, RuntimeName: "rt"})
	if st.StartTime == nil || st.StartTime.UnixNano() != 1000 {
		t.Errorf("start time %v, want the oldest sandbox's", st.StartTime)
	}
	if st.PodIP != "10.0.0.1" || len(st.PodIPs) != 1 {
		t.Errorf("IPs %q %v", st.PodIP, st.PodIPs)
	}
	a, b, cc := st.ContainerStatuses[0], st.ContainerStatuses[1], st.ContainerStatuses[2]
	if a.State.Waiting == nil || a.State.Waiting.Reason != "CrashLoopBackOff" || a.RestartCount != 1 || a.ContainerID != "rt://a1" ||
		a.LastTerminationState.Terminated == nil || a.LastTerminationState.Terminated.ExitCode != 2 || a.LastTerminationState.Terminated.ContainerID != "rt://a1" {
		t.Errorf("a: %+v", a)
	}
	if b.State.Running == nil || !b.Ready || b.ContainerID != "rt://b0" {
		t.Errorf("b: %+v", b)
	}
	if cc.State.Waiting == nil || cc.State.Waiting.Reason != "ErrImagePull" || cc.State.Waiting.Message != "no such image" || cc.ContainerID != "" {
		t.Errorf("c: %+v", cc)
	}
	if st.Phase != v1.PodPending {
		t.Errorf("phase %s", st.Phase)
	}
	for _, cond := range st.Conditions {
		want := v1.ConditionTrue
		if cond.Type == v1.PodReady || cond.Type == v1.ContainersReady {
			want = v1.ConditionFalse
		}
		if cond.Status != want {
			t.Errorf("condition %s is %s", cond.Type, cond.Status)
		}
	}

	// A terminal status shows how containers ended, not why they wait.
	st = Generate(Input{Pod: pod, Runtime: rt, Terminal: true, Waits: waits, RuntimeName: "rt"})
	a = st.ContainerStatuses[0]
	if a.State.Terminated == nil || a.State.Terminated.ExitCode != 2 ||
		a.LastTerminationState.Terminated == nil || a.LastTerminationState.Terminated.ExitCode != 1 {
		t.Errorf("terminal a: %+v", a)
	}
	if st.Phase != v1.PodFailed {
		t.Errorf("terminal phase %s", st.Phase)
	}
	if st.PodIP != "" || st.PodIPs != nil {
		t.Errorf("terminal IPs %q %v", st.PodIP, st.PodIPs)
	}

	// No container anywhere: creating, not started (said so, as the
	// kubelet's prober says it: clients read it without a nil check).
	st = Generate(Input{Pod: pod, Runtime: crifake.RuntimePod(nil), RuntimeName: "rt"})
	if st.StartTime != nil || st.Phase != v1.PodPending {
		t.Errorf("empty: %+v", st)
	}
	for _, cs := range st.ContainerStatuses {
		if cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating" || cs.Started == nil || *cs.Started {
			t.Errorf("empty %s: %+v", cs.Name, cs)
		}
	}
}

func TestGenerateStatusInitContainers(t *testing.T) {
	pod := crifake.WithInits(crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}), crifake.Init{Name: "sc", Sidecar: true}, crifake.Init{Name: "i1"}, crifake.Init{Name: "i2"})
	for _, tc := range []struct {
		name        string
		rt          *cri.PodRuntime
		init, ctrs  string
		initialized string // the Initialized condition's status and message
		phase       v1.PodPhase
	}{
		{
			name: "nothing yet", rt: crifake.RuntimePod(nil),
			init: "sc=waiting(PodInitializing) i1=waiting(PodInitializing) i2=waiting(PodInitializing)", ctrs: "app=waiting(PodInitializing)",
			initialized: "False containers with incomplete status: [sc i1 i2]", phase: v1.PodPending,
		},
		{
			name: "instances of an earlier sandbox do not count",
			rt:   crifake.RuntimePod(nil, crifake.Instance("i1", "s0", "i1", 0, crifake.Exited, 0, 2), crifake.Instance("sc", "s0", "sc", 0, crifake.Running, 0, 1)),
			init: "sc=waiting(PodInitializing) i1=waiting(PodInitializing) i2=waiting(PodInitializing)", ctrs: "app=waiting(PodInitializing)",
			initialized: "False containers with incomplete status: [sc i1 i2]", phase: v1.PodPending,
		},
		{
			name: "the sidecar runs, i1 succeeded, i2 runs",
			rt:   crifake.RuntimePod(nil, crifake.Instance("i2", "s1", "i2", 0, crifake.Running, 0, 3), crifake.Instance("i1", "s1", "i1", 0, crifake.Exited, 0, 2), crifake.Instance("sc", "s1", "sc", 0, crifake.Running, 0, 1)),
			init: "sc=running i1=exited(0) i2=running", ctrs: "app=waiting(PodInitializing)",
			initialized: "False containers with incomplete status: [i2]", phase: v1.PodPending,
		},
		{
			name: "all succeeded, the sidecar exited",
			rt: crifake.RuntimePod(nil, crifake.Instance("i2", "s1", "i2", 0, crifake.Exited, 0, 3), crifake.Instance("i1", "s1", "i1", 0, crifake.Exited, 0, 2),
				crifake.Instance("sc", "s1", "sc", 0, crifake.Exited, 1, 1)),
			init: "sc=exited(1) i1=exited(0) i2=exited(0)", ctrs: "app=waiting(PodInitializing)",
			initialized: "False containers with incomplete status: [sc]", phase: v1.PodPending,
		},
		{
			name: "the container started: initialized, whatever the sidecar does",
			rt: crifake.RuntimePod(nil, crifake.Instance("a0", "s1", "app", 0, crifake.Running, 0, 4), crifake.Instance("i2", "s1", "i2", 0, crifake.Exited, 0, 3),
				crifake.Instance("i1", "s1", "i1", 0, crifake.Exited, 0, 2), crifake.Instance("sc", "s1", "sc", 0, crifake.Exited, 1, 1)),
			init: "sc=exited(1) i1=exited(0) i2=exited(0)", ctrs: "app=running",
			initialized: "True ", phase: v1.PodRunning,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := Generate(Input{Pod: pod, Runtime: tc.rt, SandboxID: "s1", RuntimeName: "rt"})
			if got := crifake.Statuses(st.InitContainerStatuses); got != tc.init {
				t.Errorf("init container statuses %s, want %s", got, tc.init)
			}
			if got := crifake.Statuses(st.ContainerStatuses); got != tc.ctrs {
				t.Errorf("container statuses %s, want %s", got, tc.ctrs)
			}
			if c := crifake.Condition(st, v1.PodInitialized); string(c.Status)+" "+c.Message != tc.initialized {
				t.Errorf("Initialized %s %q, want %s", c.Status, c.Message, tc.initialized)
			}
			if st.Phase != tc.phase {
				t.Errorf("phase %s, want %s", st.Phase, tc.phase)
			}
			// Never ready: the sidecar does not run where the container does.
			if c := crifake.Condition(st, v1.PodReady); c.Status != v1.ConditionFalse {
				t.Errorf("Ready is %s", c.Status)
			}
		})
	}
}

// TestPodReadyToStartContainers: the condition follows the state of the
// sandbox the status is generated for; a terminal status (no sandbox) is
// not ready.
func TestPodReadyToStartContainers(t *testing.T) {
	sb := func(id string, state runtimeapi.PodSandboxState) *runtimeapi.PodSandbox {
		return &runtimeapi.PodSandbox{Id: id, State: state}
	}
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	for _, tc := range []struct {
		name      string
		sandboxes []*runtimeapi.PodSandbox
		sandboxID string
		want      v1.ConditionStatus
	}{
		{"ready sandbox", []*runtimeapi.PodSandbox{sb("s2", runtimeapi.PodSandboxState_SANDBOX_READY), sb("s1", runtimeapi.PodSandboxState_SANDBOX_NOTREADY)}, "s2", v1.ConditionTrue},
		{"stopped sandbox", []*runtimeapi.PodSandbox{sb("s1", runtimeapi.PodSandboxState_SANDBOX_NOTREADY)}, "s1", v1.ConditionFalse},
		{"no sandbox yet", nil, "", v1.ConditionFalse},
		{"terminal status", []*runtimeapi.PodSandbox{sb("s1", runtimeapi.PodSandboxState_SANDBOX_READY)}, "", v1.ConditionFalse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := Generate(Input{Pod: pod, Runtime: crifake.RuntimePod(tc.sandboxes), SandboxID: tc.sandboxID})
			var got v1.ConditionStatus
			for _, c := range st.Conditions {
				if c.Type == v1.PodReadyToStartContainers {
					got = c.Status
				}
			}
			if got != tc.want {
				t.Errorf("PodReadyToStartContainers = %q, want %q", got, tc.want)
			}
		})
	}
}

// The pod's messages share 12 KiB evenly between its containers, init
// containers included, in both the state and the last termination state.
func TestCapPodMessages(t *testing.T) {
	terminated := func(n int) v1.ContainerState {
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Message: strings.Repeat("m", n)}}
	}
	for _, tc := range []struct {
		name           string
		inits, regular int
		size           int
		want           int
	}{
		{"one container keeps 4 KiB", 0, 1, 4096, 4096},
		{"three share 12 KiB", 0, 3, 4096, 4096},
		{"four get 3 KiB each", 0, 4, 4096, 3072},
		{"init containers count", 2, 2, 4096, 3072},
		{"short messages stay", 0, 12, 100, 100},
		{"twelve get 1 KiB", 6, 6, 4096, 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{}
			st := &v1.PodStatus{}
			for i := range tc.inits {
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: fmt.Sprint("i", i)})
				st.InitContainerStatuses = append(st.InitContainerStatuses, v1.ContainerStatus{State: terminated(tc.size), LastTerminationState: terminated(tc.size)})
			}
			for i := range tc.regular {
				pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprint("c", i)})
				st.ContainerStatuses = append(st.ContainerStatuses, v1.ContainerStatus{State: terminated(tc.size), LastTerminationState: terminated(tc.size)})
			}
			total := 0
			capPodMessages(pod, st)
			for _, cs := range append(st.InitContainerStatuses, st.ContainerStatuses...) {
				for _, s := range []v1.ContainerState{cs.State, cs.LastTerminationState} {
					if n := len(s.Terminated.Message); n != tc.want {
						t.Errorf("message of %d bytes, want %d", n, tc.want)
					}
				}
				total += len(cs.State.Terminated.Message)
			}
			if total > maxPodMessages {
				t.Errorf("the pod's current messages take %d bytes, more than %d", total, maxPodMessages)
			}
		})
	}
}

// TestGenerateStaticPodNotForcedTerminal: a terminal static pod's phase is
// its containers' restart policy's, as the kubelet's getPhase leaves it
// (kubernetes#116484): an Always pod stopped for good stays Running, so its
// mirror pod, which the manifest's next versions share, takes no terminal
// phase. The same pod from the API server is Failed.
func TestGenerateStaticPodNotForcedTerminal(t *testing.T) {
	static := func(p *v1.Pod) *v1.Pod {
		p.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
		return p
	}
	sandboxes := []*runtimeapi.PodSandbox{{Id: "s0", CreatedAt: 1000}}
	for _, tc := range []struct {
		name  string
		pod   *v1.Pod
		exits []int32
		want  v1.PodPhase
	}{
		{"static, Always, stopped", static(crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})), []int32{137}, v1.PodRunning},
		{"static, Always, exited 0", static(crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})), []int32{0}, v1.PodRunning},
		{"static, Never, succeeded", static(crifake.MakePod("p", v1.RestartPolicyNever, crifake.Ctr{Name: "a"})), []int32{0}, v1.PodSucceeded},
		{"static, Never, failed", static(crifake.MakePod("p", v1.RestartPolicyNever, crifake.Ctr{Name: "a"})), []int32{1}, v1.PodFailed},
		{"API pod, Always, stopped", crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}), []int32{137}, v1.PodFailed},
		{"API pod, Always, exited 0", crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}), []int32{0}, v1.PodSucceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := crifake.RuntimePod(sandboxes, crifake.Instance("a0", "s0", "a", 0, crifake.Exited, tc.exits[0], 10))
			st := Generate(Input{Pod: tc.pod, Runtime: rt, Terminal: true, RuntimeName: "rt"})
			if st.Phase != tc.want {
				t.Errorf("phase %s, want %s", st.Phase, tc.want)
			}
			if cs := st.ContainerStatuses[0]; cs.State.Terminated == nil || cs.State.Terminated.ExitCode != tc.exits[0] {
				t.Errorf("container %+v, want terminated with %d", cs, tc.exits[0])
			}
		})
	}
}

// TestStatusImageIsTheInstances: a container's status names the image its
// instance runs, as the runtime reports it, not the spec's: an init
// container that finished before its image was changed still shows the
// old one (node e2e: "should not restart init container when updated with
// a new image after finishing"). Without an instance it is the spec's.
func TestStatusImageIsTheInstances(t *testing.T) {
	pod := crifake.WithInits(crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}), crifake.Init{Name: "i1"})
	pod.Spec.InitContainers[0].Image = "new:2"
	pod.Spec.Containers[0].Image = "app:1"
	ran := func(f func() (*runtimeapi.ContainerStatus, string), image string) func() (*runtimeapi.ContainerStatus, string) {
		return func() (*runtimeapi.ContainerStatus, string) {
			st, sb := f()
			st.Image = &runtimeapi.ImageSpec{Image: image}
			return st, sb
		}
	}
	st := Generate(Input{Pod: pod, Runtime: crifake.RuntimePod(nil, ran(crifake.Instance("i1", "s1", "i1", 0, crifake.Exited, 0, 2), "docker.io/library/old:1")), SandboxID: "s1", RuntimeName: "rt"})
	if got := st.InitContainerStatuses[0].Image; got != "docker.io/library/old:1" {
		t.Errorf("init container's image %q, want the instance's docker.io/library/old:1", got)
	}
	if got := st.ContainerStatuses[0].Image; got != "app:1" {
		t.Errorf("not yet created container's image %q, want the spec's app:1", got)
	}
}
