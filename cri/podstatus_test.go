package cri

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Container states as generateStatus reports them.
var (
	csRunning  = v1.ContainerStatus{State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
	csCreating = v1.ContainerStatus{State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
)

func csExited(code int32) v1.ContainerStatus {
	return v1.ContainerStatus{State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}}
}

// csCrashLoop is a container waiting for its restart after exiting with code.
func csCrashLoop(code int32) v1.ContainerStatus {
	return v1.ContainerStatus{
		State:                v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}},
	}
}

// kubeletPhase transcribes the kubelet's rules for a pod without init
// containers: getPhase (pkg/kubelet/kubelet_pods.go), and for a terminal
// pod the status manager's TerminatePod, which turns a phase that is not
// terminal into Failed.
func kubeletPhase(policy v1.RestartPolicy, info []v1.ContainerStatus, podIsTerminal bool) v1.PodPhase {
	unknown, running, waiting, stopped, succeeded := 0, 0, 0, 0, 0
	for _, cs := range info {
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.State.Waiting != nil:
			if cs.LastTerminationState.Terminated != nil {
				stopped++
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}
	var phase v1.PodPhase
	switch {
	case waiting > 0:
		phase = v1.PodPending
	case running > 0 && unknown == 0:
		phase = v1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		switch {
		case podIsTerminal && stopped == succeeded:
			phase = v1.PodSucceeded
		case podIsTerminal:
			phase = v1.PodFailed
		case policy == v1.RestartPolicyAlways:
			phase = v1.PodRunning
		case stopped == succeeded:
			phase = v1.PodSucceeded
		case policy == v1.RestartPolicyNever:
			phase = v1.PodFailed
		default:
			phase = v1.PodRunning
		}
	default:
		phase = v1.PodPending
	}
	if podIsTerminal && phase != v1.PodSucceeded && phase != v1.PodFailed {
		phase = v1.PodFailed
	}
	return phase
}

func TestPhase(t *testing.T) {
	always, onFailure, never := v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever
	for _, tc := range []struct {
		name     string
		policy   v1.RestartPolicy
		statuses []v1.ContainerStatus
		terminal bool
		want     v1.PodPhase
	}{
		{"no container yet", always, nil, false, v1.PodPending},
		{"creating", always, []v1.ContainerStatus{csCreating, csCreating}, false, v1.PodPending},
		{"one running, one creating", always, []v1.ContainerStatus{csRunning, csCreating}, false, v1.PodPending},
		{"all running", never, []v1.ContainerStatus{csRunning, csRunning}, false, v1.PodRunning},
		{"running and succeeded", never, []v1.ContainerStatus{csRunning, csExited(0)}, false, v1.PodRunning},
		{"running and failed, Never", never, []v1.ContainerStatus{csRunning, csExited(1)}, false, v1.PodRunning},
		{"running and crash-looping", always, []v1.ContainerStatus{csRunning, csCrashLoop(1)}, false, v1.PodRunning},
		{"crash-looping alone", always, []v1.ContainerStatus{csCrashLoop(1)}, false, v1.PodRunning},
		{"crash-looping after exit 0", always, []v1.ContainerStatus{csCrashLoop(0)}, false, v1.PodRunning},
		{"crash-looping, OnFailure", onFailure, []v1.ContainerStatus{csCrashLoop(1), csExited(0)}, false, v1.PodRunning},
		{"all succeeded, Always", always, []v1.ContainerStatus{csExited(0), csExited(0)}, false, v1.PodRunning},
		{"all succeeded, OnFailure", onFailure, []v1.ContainerStatus{csExited(0), csExited(0)}, false, v1.PodSucceeded},
		{"all succeeded, Never", never, []v1.ContainerStatus{csExited(0), csExited(0)}, false, v1.PodSucceeded},
		{"one failed, Never", never, []v1.ContainerStatus{csExited(0), csExited(2)}, false, v1.PodFailed},
		{"one failed, OnFailure", onFailure, []v1.ContainerStatus{csExited(0), csExited(2)}, false, v1.PodRunning},
		{"all failed, Always", always, []v1.ContainerStatus{csExited(1), csExited(137)}, false, v1.PodRunning},
		{"creating and exited", never, []v1.ContainerStatus{csExited(0), csCreating}, false, v1.PodPending},

		{"terminal, all succeeded, Always", always, []v1.ContainerStatus{csExited(0), csExited(0)}, true, v1.PodSucceeded},
		{"terminal, all succeeded, Never", never, []v1.ContainerStatus{csExited(0)}, true, v1.PodSucceeded},
		{"terminal, one failed", onFailure, []v1.ContainerStatus{csExited(0), csExited(143)}, true, v1.PodFailed},
		{"terminal, crash-looping after exit 0", always, []v1.ContainerStatus{csCrashLoop(0)}, true, v1.PodFailed},
		{"terminal, never started", always, []v1.ContainerStatus{csExited(0), csCreating}, true, v1.PodFailed},
		{"terminal, still running", always, []v1.ContainerStatus{csRunning}, true, v1.PodFailed},
		{"terminal, no container", never, nil, true, v1.PodFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := phase(tc.policy, tc.statuses, tc.terminal); got != tc.want {
				t.Errorf("phase = %s, want %s", got, tc.want)
			}
			if ref := kubeletPhase(tc.policy, tc.statuses, tc.terminal); ref != tc.want {
				t.Errorf("the kubelet's rules give %s; the table says %s", ref, tc.want)
			}
		})
	}
}

// Every combination of up to three containers in the states generateStatus
// produces, under every policy, agrees with the kubelet's rules.
func TestPhaseMatchesKubelet(t *testing.T) {
	states := []v1.ContainerStatus{csRunning, csCreating, csExited(0), csExited(1), csCrashLoop(0), csCrashLoop(1)}
	var combos [][]v1.ContainerStatus
	var rec func(prefix []v1.ContainerStatus)
	rec = func(prefix []v1.ContainerStatus) {
		combos = append(combos, prefix)
		if len(prefix) == 3 {
			return
		}
		for _, s := range states {
			rec(append(append([]v1.ContainerStatus(nil), prefix...), s))
		}
	}
	rec(nil)
	for _, policy := range []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever} {
		for _, terminal := range []bool{false, true} {
			for _, combo := range combos {
				if got, want := phase(policy, combo, terminal), kubeletPhase(policy, combo, terminal); got != want {
					t.Errorf("%s terminal=%v %s: phase %s, kubelet %s", policy, terminal, describeStatuses(combo), got, want)
				}
			}
		}
	}
}

func describeStatuses(statuses []v1.ContainerStatus) string {
	var out []string
	for _, cs := range statuses {
		switch {
		case cs.State.Running != nil:
			out = append(out, "running")
		case cs.State.Terminated != nil:
			out = append(out, fmt.Sprintf("exited(%d)", cs.State.Terminated.ExitCode))
		case cs.LastTerminationState.Terminated != nil:
			out = append(out, fmt.Sprintf("crashloop(%d)", cs.LastTerminationState.Terminated.ExitCode))
		default:
			out = append(out, "waiting")
		}
	}
	return fmt.Sprint(out)
}

// rtContainer is a runtime container status for podRuntime fixtures.
func rtContainer(id, sandbox, name string, attempt uint32, state runtimeapi.ContainerState, exitCode int32, createdAt int64) (*runtimeapi.ContainerStatus, string) {
	return &runtimeapi.ContainerStatus{
		Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		State: state, ExitCode: exitCode, CreatedAt: createdAt, StartedAt: createdAt + 1, FinishedAt: createdAt + 2,
	}, sandbox
}

// podFixture builds a podRuntime from containers given newest first.
func podFixture(sandboxes []*runtimeapi.PodSandbox, cs ...func() (*runtimeapi.ContainerStatus, string)) *podRuntime {
	p := &podRuntime{uid: "u", sandboxes: sandboxes, sandboxOf: map[string]string{}}
	for _, f := range cs {
		c, sb := f()
		p.containers = append(p.containers, c)
		p.sandboxOf[c.Id] = sb
	}
	return p
}

func fxC(id, sandbox, name string, attempt uint32, state runtimeapi.ContainerState, exitCode int32, createdAt int64) func() (*runtimeapi.ContainerStatus, string) {
	return func() (*runtimeapi.ContainerStatus, string) {
		return rtContainer(id, sandbox, name, attempt, state, exitCode, createdAt)
	}
}

const (
	stRunning = runtimeapi.ContainerState_CONTAINER_RUNNING
	stExited  = runtimeapi.ContainerState_CONTAINER_EXITED
	stCreated = runtimeapi.ContainerState_CONTAINER_CREATED
)

func TestFinished(t *testing.T) {
	two := func(policy v1.RestartPolicy) *v1.Pod { return makePod("p", policy, ctr{name: "a"}, ctr{name: "b"}) }
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		rt   *podRuntime
		want bool
	}{
		{"Always never finishes", two(v1.RestartPolicyAlways),
			podFixture(nil, fxC("a0", "s1", "a", 0, stExited, 0, 2), fxC("b0", "s1", "b", 0, stExited, 0, 1)), false},
		{"no containers in the spec", makePod("p", v1.RestartPolicyNever), podFixture(nil), false},
		{"Never, all exited", two(v1.RestartPolicyNever),
			podFixture(nil, fxC("a0", "s1", "a", 0, stExited, 1, 2), fxC("b0", "s1", "b", 0, stExited, 0, 1)), true},
		{"Never, one running", two(v1.RestartPolicyNever),
			podFixture(nil, fxC("a0", "s1", "a", 0, stExited, 0, 2), fxC("b0", "s1", "b", 0, stRunning, 0, 1)), false},
		{"Never, one not created", two(v1.RestartPolicyNever),
			podFixture(nil, fxC("a0", "s1", "a", 0, stExited, 0, 2)), false},
		{"Never, one only created", two(v1.RestartPolicyNever),
			podFixture(nil, fxC("a0", "s1", "a", 0, stExited, 0, 2), fxC("b0", "s1", "b", 0, stCreated, 0, 1)), false},
		{"OnFailure, all succeeded", two(v1.RestartPolicyOnFailure),
			podFixture(nil, fxC("a1", "s1", "a", 1, stExited, 0, 3), fxC("b0", "s1", "b", 0, stExited, 0, 2), fxC("a0", "s1", "a", 0, stExited, 1, 1)), true},
		{"OnFailure, newest failed", two(v1.RestartPolicyOnFailure),
			podFixture(nil, fxC("a1", "s1", "a", 1, stExited, 1, 3), fxC("b0", "s1", "b", 0, stExited, 0, 2), fxC("a0", "s1", "a", 0, stExited, 0, 1)), false},
		{"Never, exited in another sandbox only", two(v1.RestartPolicyNever),
			podFixture(nil, fxC("a0", "s0", "a", 0, stExited, 0, 2), fxC("b0", "s1", "b", 0, stExited, 0, 1)), false},
		{"OnFailure, succeeded in an earlier sandbox", two(v1.RestartPolicyOnFailure),
			podFixture(nil, fxC("b1", "s1", "b", 1, stExited, 0, 3), fxC("a0", "s0", "a", 0, stExited, 0, 2), fxC("b0", "s0", "b", 0, stExited, 1, 1)), true},
		{"OnFailure, failed in an earlier sandbox", two(v1.RestartPolicyOnFailure),
			podFixture(nil, fxC("b1", "s1", "b", 1, stExited, 0, 3), fxC("a0", "s0", "a", 0, stExited, 1, 2)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := finished(tc.pod, tc.rt, "s1"); got != tc.want {
				t.Errorf("finished = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGenerateStatus(t *testing.T) {
	pod := makePod("p", v1.RestartPolicyAlways, ctr{name: "a"}, ctr{name: "b"}, ctr{name: "c"})
	sandboxes := []*runtimeapi.PodSandbox{{Id: "s1", CreatedAt: 2000}, {Id: "s0", CreatedAt: 1000}}
	rt := podFixture(sandboxes,
		fxC("a1", "s1", "a", 1, stExited, 2, 30),
		fxC("b0", "s1", "b", 0, stRunning, 0, 20),
		fxC("a0", "s1", "a", 0, stExited, 1, 10),
	)
	waits := map[string]waiting{
		"a": {reason: "CrashLoopBackOff", message: "back-off"},
		"c": {reason: "ErrImagePull", message: "no such image"},
	}

	st := generateStatus(statusInput{pod: pod, rt: rt, sandboxID: "s1", podIP: "10.0.0.1", waits: waits, runtimeName: "rt"})
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
	st = generateStatus(statusInput{pod: pod, rt: rt, terminal: true, waits: waits, runtimeName: "rt"})
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

	// No container anywhere: creating.
	st = generateStatus(statusInput{pod: pod, rt: podFixture(nil), runtimeName: "rt"})
	if st.StartTime != nil || st.Phase != v1.PodPending {
		t.Errorf("empty: %+v", st)
	}
	for _, cs := range st.ContainerStatuses {
		if cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating" || cs.Started != nil {
			t.Errorf("empty %s: %+v", cs.Name, cs)
		}
	}
}
