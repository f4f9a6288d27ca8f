package kuberuntime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/crifake"
	"github.com/podlife/podlife/worker"
)

// runningPod starts an Always pod with containers a and b, and c, which has
// exited with code 1 and waits for its restart.
func runningPod(h *harness, name string) *v1.Pod {
	h.t.Helper()
	pod := crifake.MakePod(name, v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"}, crifake.Ctr{Name: "c"})
	h.mustSync(pod)
	h.exit(crifake.ContainerID(pod, 0, "c", 0), 1)
	h.rt.ResetStops()
	return pod
}

func TestSyncTerminatingPodGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		name     string
		podGrace *int64
		grace    *int64
		wantStop int64 // the stops' timeout: at least the 2 s minimum
	}{
		{"default", nil, nil, 30},
		{"pod's own", new(int64(17)), nil, 17},
		{"pod's own zero", new(int64(0)), nil, minimumGracePeriod},
		{"invalid pod grace", new(int64(-3)), nil, 30},
		{"given", new(int64(17)), new(int64(5)), 5},
		{"given zero", new(int64(17)), new(int64(0)), minimumGracePeriod},
		{"given one", new(int64(17)), new(int64(1)), minimumGracePeriod},
		{"given longer", new(int64(17)), new(int64(60)), 60},
		// Beyond what the CRI client's time.Duration can carry: clamped.
		{"pod's own overflows", new(int64(9.3e9)), nil, maxStopTimeout},
		{"given overflows", nil, new(int64(9.3e9)), maxStopTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"}, crifake.Ctr{Name: "c"})
			pod.Spec.TerminationGracePeriodSeconds = tc.podGrace
			h.mustSync(pod)
			h.exit(crifake.ContainerID(pod, 0, "c", 0), 1)
			// a honours SIGTERM with 143; b's stop leaves the fake's 0.
			h.rt.OnStop = func(_ context.Context, id string, _ int64, next func() error) error {
				if err := next(); err != nil {
					return err
				}
				if id == crifake.ContainerID(pod, 0, "a", 0) {
					h.fake.Lock()
					h.fake.Containers[id].ExitCode = 143
					h.fake.Unlock()
				}
				return nil
			}
			h.events.Reset()

			if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, tc.grace, nil); err != nil {
				t.Fatalf("SyncTerminatingPod: %v", err)
			}
			// Every container that had not exited, stopped with the grace.
			want := []crifake.StopCall{{ID: crifake.ContainerID(pod, 0, "a", 0), Timeout: tc.wantStop}, {ID: crifake.ContainerID(pod, 0, "b", 0), Timeout: tc.wantStop}}
			if got := h.rt.StopCalls(); !slices.Equal(got, want) {
				t.Errorf("stops %v, want %v", got, want)
			}
			_, ids := h.podObjects(pod.UID)
			for _, id := range ids {
				if st := h.containerState(id); st != runtimeapi.ContainerState_CONTAINER_EXITED {
					t.Errorf("%s is %v", id, st)
				}
			}
			if st := h.sandboxState(crifake.SandboxID(pod, 0)); st != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
				t.Errorf("sandbox is %v", st)
			}
			// The final status: the exit codes, a failed pod.
			st := h.statuses.last(t, pod.UID)
			if st.Phase != v1.PodFailed {
				t.Errorf("phase %s, want Failed", st.Phase)
			}
			for i, code := range []int32{143, 0, 1} {
				cs := st.ContainerStatuses[i]
				if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != code || cs.Ready {
					t.Errorf("status of %s: %+v, want exit code %d", cs.Name, cs, code)
				}
			}
			for _, c := range st.Conditions {
				if (c.Type == v1.PodReady || c.Type == v1.ContainersReady) && c.Status != v1.ConditionFalse {
					t.Errorf("condition %s is %s", c.Type, c.Status)
				}
			}
			wantEvents := []string{
				"Stopping container a",
				"Stopping container b",
			}
			got := h.events.Messages(pod.UID, "Killing")
			slices.Sort(got) // the stops run concurrently
			if !slices.Equal(got, wantEvents) || len(h.events.Reasons(pod.UID)) != 2 {
				t.Errorf("events %v, Killing messages %q, want %q", h.events.Reasons(pod.UID), got, wantEvents)
			}
			// Nothing to do on a retry, and nothing restarts.
			if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, tc.grace, nil); err != nil {
				t.Fatalf("second SyncTerminatingPod: %v", err)
			}
			if n := len(h.rt.StopCalls()); n != 2 {
				t.Errorf("%d stops after the retry", n)
			}
			if n := h.calls("StartContainer"); n != 3 {
				t.Errorf("StartContainer called %d times", n)
			}
		})
	}
}

func TestSyncTerminatingPodStatusFunc(t *testing.T) {
	const msg = "Pod was terminated in response to imminent node shutdown."
	// nodeShutdown is the shutdown manager's function: Failed unless the
	// pod had already Succeeded.
	nodeShutdown := func(seen *v1.PodPhase) func(*v1.PodStatus) {
		return func(st *v1.PodStatus) {
			*seen = st.Phase
			if st.Phase != v1.PodSucceeded {
				st.Phase = v1.PodFailed
			}
			st.Reason, st.Message = "Terminated", msg
		}
	}
	for _, tc := range []struct {
		name   string
		policy v1.RestartPolicy
		// completed: the containers exited 0 by themselves before the kill.
		completed bool
		// reasonOnly: a function that sets only a reason.
		reasonOnly bool
		wantSeen   v1.PodPhase
		wantFinal  v1.PodPhase
	}{
		// Containers that exit 0 on SIGTERM do not make a killed pod
		// Succeeded in the function's eyes: it sees the phase before the kill.
		{name: "running pod killed", policy: v1.RestartPolicyAlways, wantSeen: v1.PodRunning, wantFinal: v1.PodFailed},
		{name: "pod that completed by itself", policy: v1.RestartPolicyNever, completed: true, wantSeen: v1.PodSucceeded, wantFinal: v1.PodSucceeded},
		// A function that leaves the phase alone gets the exit codes' phase.
		{name: "function sets no phase", policy: v1.RestartPolicyAlways, reasonOnly: true, wantSeen: v1.PodRunning, wantFinal: v1.PodSucceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.MakePod("p", tc.policy, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
			h.mustSync(pod)
			if tc.completed {
				h.exit("p_ns_uid-p_0_a_0", 0)
				h.exit("p_ns_uid-p_0_b_0", 0)
			}
			var seen v1.PodPhase
			fn := nodeShutdown(&seen)
			if tc.reasonOnly {
				fn = func(st *v1.PodStatus) { seen = st.Phase; st.Reason = "Terminated" }
			}
			if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, new(int64(1)), fn); err != nil {
				t.Fatalf("SyncTerminatingPod: %v", err)
			}
			if seen != tc.wantSeen {
				t.Errorf("the status function saw phase %s, want %s", seen, tc.wantSeen)
			}
			st := h.statuses.last(t, pod.UID)
			if st.Phase != tc.wantFinal || st.Reason != "Terminated" {
				t.Errorf("final status %s %q, want %s Terminated", st.Phase, st.Reason, tc.wantFinal)
			}
			for _, cs := range st.ContainerStatuses {
				if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
					t.Errorf("status of %s: %+v", cs.Name, cs.State)
				}
			}
		})
	}
}

func TestSyncTerminatingPodStopError(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := runningPod(h, "p")
	written := h.statuses.count(pod.UID)
	h.fake.InjectError("StopContainer", errors.New("injected"))

	err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "injected") || !strings.Contains(err.Error(), "stop container") {
		t.Fatalf("SyncTerminatingPod = %v, want the stop error", err)
	}
	if n := h.statuses.count(pod.UID); n != written {
		t.Errorf("a status was written for a pod still running")
	}
	// The other container was stopped; the failed one was not.
	running := 0
	_, ids := h.podObjects(pod.UID)
	for _, id := range ids {
		if h.containerState(id) == runtimeapi.ContainerState_CONTAINER_RUNNING {
			running++
		}
	}
	if running != 1 {
		t.Errorf("%d containers run, want 1", running)
	}

	// The engine retries: now it succeeds, stopping only what still runs.
	h.rt.ResetStops()
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if n := len(h.rt.StopCalls()); n != 1 {
		t.Errorf("retry stopped %d containers, want 1", n)
	}
	if st := h.statuses.last(t, pod.UID); st.Phase != v1.PodFailed {
		t.Errorf("phase %s", st.Phase)
	}
}

func TestSyncTerminatingPodSandboxStopError(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := runningPod(h, "p")
	h.fake.InjectError("StopPodSandbox", errors.New("injected"))
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("SyncTerminatingPod = %v, want the sandbox error", err)
	}
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if st := h.sandboxState(crifake.SandboxID(pod, 0)); st != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Errorf("sandbox is %v", st)
	}
}

// A runtime that says it stopped a container and did not violates the CRI:
// the pod must not be reported terminated.
func TestSyncTerminatingPodContainerLeftRunning(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := runningPod(h, "p")
	stuck := crifake.ContainerID(pod, 0, "b", 0)
	h.rt.OnStop = func(_ context.Context, id string, _ int64, next func() error) error {
		if id == stuck {
			return nil // claims success, leaves it running
		}
		return next()
	}
	written := h.statuses.count(pod.UID)
	for range 2 {
		err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil)
		if err == nil || !strings.Contains(err.Error(), stuck) || !strings.Contains(err.Error(), "still run") {
			t.Fatalf("SyncTerminatingPod = %v, want an error naming %s", err, stuck)
		}
	}
	if n := h.statuses.count(pod.UID); n != written {
		t.Error("a final status was written while a container runs")
	}
	// The runtime recovers: the retry succeeds.
	h.rt.OnStop = nil
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if st := h.statuses.last(t, pod.UID); st.ContainerStatuses[1].State.Terminated == nil {
		t.Errorf("status of b: %+v", st.ContainerStatuses[1].State)
	}
}

// A shorter grace period cancels the running SyncTerminatingPod: it returns
// at once with ctx's error although StopContainer has not returned yet by
// itself, and the engine calls again with the shorter grace.
func TestSyncTerminatingPodCancelled(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := runningPod(h, "p")
	entered := make(chan string, 2)
	h.rt.OnStop = func(ctx context.Context, id string, _ int64, _ func() error) error {
		entered <- id
		<-ctx.Done() // a long grace: SIGTERM is ignored
		return ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.s.SyncTerminatingPod(ctx, pod, nil, new(int64(300)), nil) }()
	crifake.WaitFor(t, entered, "StopContainer")
	crifake.WaitFor(t, entered, "StopContainer")
	select {
	case err := <-done:
		t.Fatalf("SyncTerminatingPod returned %v before the cancel", err)
	default:
	}
	cancel()
	if err := crifake.WaitFor(t, done, "SyncTerminatingPod to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("SyncTerminatingPod = %v, want context.Canceled", err)
	}
	if st := h.statuses.last(t, pod.UID); st.Phase != v1.PodRunning {
		t.Errorf("a final status (%s) was written for a cancelled termination", st.Phase)
	}

	// The retry with the short grace.
	h.rt.OnStop = nil
	h.rt.ResetStops()
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, new(int64(0)), nil); err != nil {
		t.Fatalf("retry: %v", err)
	}
	want := []crifake.StopCall{{ID: crifake.ContainerID(pod, 0, "a", 0), Timeout: minimumGracePeriod}, {ID: crifake.ContainerID(pod, 0, "b", 0), Timeout: minimumGracePeriod}}
	if got := h.rt.StopCalls(); !slices.Equal(got, want) {
		t.Errorf("stops %v, want %v", got, want)
	}
}

// A pod in crash-loop back-off terminates at once: termination does not
// wait for the back-off, and the back-off is forgotten.
func TestSyncTerminatingPodInCrashLoop(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
	h.mustSync(pod)
	h.exit(crifake.ContainerID(pod, 0, "a", 0), 1)
	h.mustSync(pod)
	h.exit(crifake.ContainerID(pod, 0, "a", 1), 1)
	if _, err := h.syncPod(pod); !errors.Is(err, ErrCrashLoopBackOff) {
		t.Fatalf("SyncPod = %v, want a crash loop", err)
	}
	if n := h.backoffEntries(pod.UID); n != 1 {
		t.Fatalf("%d back-off entries", n)
	}
	creates := h.calls("CreateContainer")

	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatalf("SyncTerminatingPod: %v", err)
	}
	if n := h.backoffEntries(pod.UID); n != 0 {
		t.Errorf("back-off kept for %d containers", n)
	}
	if n := h.calls("CreateContainer"); n != creates {
		t.Error("a container was created while terminating")
	}
	st := h.statuses.last(t, pod.UID)
	if st.Phase != v1.PodFailed {
		t.Errorf("phase %s", st.Phase)
	}
	a := st.ContainerStatuses[0]
	if a.State.Terminated == nil || a.State.Terminated.ExitCode != 1 || a.RestartCount != 1 {
		t.Errorf("final status of a: %+v", a)
	}
	if a.LastTerminationState.Terminated == nil || a.LastTerminationState.Terminated.ContainerID != "cri://"+crifake.ContainerID(pod, 0, "a", 0) {
		t.Errorf("last termination of a: %+v", a.LastTerminationState)
	}
}

// A container SyncPod created but did not start (termination was requested
// in between) is stopped too: it must never start later.
func TestSyncTerminatingPodStopsCreatedContainer(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
	ctx, cancel := context.WithCancel(context.Background())
	h.rt.OnCreate = func(_ context.Context, _ string, cfg *runtimeapi.ContainerConfig) error {
		if cfg.Metadata.Name == "b" {
			cancel()
		}
		return nil
	}
	if _, err := h.s.SyncPod(ctx, 0, pod, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("SyncPod = %v", err)
	}
	b := crifake.ContainerID(pod, 0, "b", 0)
	if st := h.containerState(b); st != runtimeapi.ContainerState_CONTAINER_CREATED {
		t.Fatalf("b is %v", st)
	}
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatalf("SyncTerminatingPod: %v", err)
	}
	if got := h.rt.StopCalls(); len(got) != 2 {
		t.Errorf("stops %v, want a and b", got)
	}
	if st := h.containerState(b); st != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("b is %v", st)
	}
}

// A pod that never got anything into the runtime terminates at once, with
// a failed final status.
func TestSyncTerminatingPodNothingRuns(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatalf("SyncTerminatingPod: %v", err)
	}
	if n := h.calls("StopContainer") + h.calls("StopPodSandbox"); n != 0 {
		t.Errorf("%d stops", n)
	}
	st := h.statuses.last(t, pod.UID)
	if st.Phase != v1.PodFailed || st.ContainerStatuses[0].State.Running != nil {
		t.Errorf("final status %+v", st)
	}
}

func TestSyncTerminatingRuntimePod(t *testing.T) {
	for _, tc := range []struct {
		name string
		// grace is the pod's terminationGracePeriodSeconds when its
		// containers were created (nil: unset, 30 s).
		grace *int64
		// prepare acts on the pod to stop, started as runningPod.
		prepare func(h *harness, pod *v1.Pod)
		// wantStops are the containers (by name) stopped.
		wantStops []string
		// wantTimeout is the stops' timeout: the recorded grace period,
		// at least the 2 s minimum.
		wantTimeout int64
	}{
		{"running", new(int64(45)), func(*harness, *v1.Pod) {}, []string{"a", "b"}, 45},
		{"running, default grace", nil, func(*harness, *v1.Pod) {}, []string{"a", "b"}, 30},
		{"running, zero grace", new(int64(0)), func(*harness, *v1.Pod) {}, []string{"a", "b"}, minimumGracePeriod},
		{"already stopped", new(int64(45)), func(h *harness, pod *v1.Pod) {
			h.exit(crifake.ContainerID(pod, 0, "a", 0), 0)
			h.exit(crifake.ContainerID(pod, 0, "b", 0), 0)
			h.killSandbox(crifake.SandboxID(pod, 0))
		}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.MakePod("orphan", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"}, crifake.Ctr{Name: "c"})
			pod.Spec.TerminationGracePeriodSeconds = tc.grace
			h.mustSync(pod)
			h.exit(crifake.ContainerID(pod, 0, "c", 0), 1)
			other := runningPod(h, "other")
			h.rt.ResetStops()
			pod.Spec.TerminationGracePeriodSeconds = new(int64(7)) // lost with the spec: unused
			tc.prepare(h, pod)
			written := h.statuses.count(pod.UID)
			h.events.Reset()

			rp := &worker.RunningPod{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
			if err := h.s.SyncTerminatingRuntimePod(context.Background(), rp); err != nil {
				t.Fatalf("SyncTerminatingRuntimePod: %v", err)
			}
			var want []crifake.StopCall
			for _, name := range tc.wantStops {
				want = append(want, crifake.StopCall{ID: crifake.ContainerID(pod, 0, name, 0), Timeout: tc.wantTimeout})
			}
			if got := h.rt.StopCalls(); !slices.Equal(got, want) {
				t.Errorf("stops %v, want %v", got, want)
			}
			// Removal happens in the background; Close waits for it.
			h.s.Close()
			if sbs, cs := h.podObjects(pod.UID); len(sbs)+len(cs) > 0 {
				t.Errorf("left behind: %v %v", sbs, cs)
			}
			if n := h.statuses.count(pod.UID); n != written {
				t.Error("a status was written for a runtime-only pod")
			}
			if ev := h.events.Reasons(pod.UID); len(ev) != 0 {
				t.Errorf("events for a runtime-only pod: %v", ev)
			}
			// The other pod is untouched.
			sbs, cs := h.podObjects(other.UID)
			if len(sbs) != 1 || len(cs) != 3 || h.sandboxState(sbs[0]) != runtimeapi.PodSandboxState_SANDBOX_READY ||
				h.containerState(crifake.ContainerID(other, 0, "a", 0)) != runtimeapi.ContainerState_CONTAINER_RUNNING {
				t.Errorf("the other pod changed: %v %v", sbs, cs)
			}
		})
	}
}

func TestSyncTerminatingRuntimePodContainerLeftRunning(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := runningPod(h, "orphan")
	h.rt.OnStop = func(context.Context, string, int64, func() error) error { return nil }
	err := h.s.SyncTerminatingRuntimePod(context.Background(), &worker.RunningPod{ID: pod.UID})
	if err == nil || !strings.Contains(err.Error(), crifake.ContainerID(pod, 0, "a", 0)) {
		t.Fatalf("SyncTerminatingRuntimePod = %v, want an error naming the running container", err)
	}
	h.s.Close()
	if sbs, cs := h.podObjects(pod.UID); len(sbs) != 1 || len(cs) != 3 {
		t.Errorf("a pod still running was removed: %v %v", sbs, cs)
	}
	if n := h.calls("RemoveContainer") + h.calls("RemovePodSandbox"); n != 0 {
		t.Errorf("%d removals", n)
	}
}

// completedPod runs a Never pod to completion: its containers exited, its
// sandbox is still ready.
func completedPod(h *harness, name string) *v1.Pod {
	h.t.Helper()
	pod := crifake.MakePod(name, v1.RestartPolicyNever, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
	h.mustSync(pod)
	h.exit(crifake.ContainerID(pod, 0, "a", 0), 0)
	h.exit(crifake.ContainerID(pod, 0, "b", 0), 0)
	if terminal, err := h.syncPod(pod); !terminal || err != nil {
		h.t.Fatalf("SyncPod = %v, %v; want terminal", terminal, err)
	}
	return pod
}

// SyncTerminatedPod stops the sandbox and keeps it, with the exited
// containers, until the pod is deleted: they are the pod's exit codes.
func TestSyncTerminatedPod(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := completedPod(h, "p") // its sandbox is still ready
	// Some back-off state for the pod, as if it had crashed, and a failed
	// pull.
	h.s.backoff.restart(pod.UID, "a", h.clock.Now())
	h.s.pulls.Failed(pod.UID, "img", "registry down")
	stops := h.calls("StopPodSandbox")

	if err := h.s.SyncTerminatedPod(context.Background(), pod, nil); err != nil {
		t.Fatalf("SyncTerminatedPod: %v", err)
	}
	if n := h.calls("StopPodSandbox"); n != stops+1 {
		t.Errorf("StopPodSandbox called %d times, want once", n-stops)
	}
	if st := h.sandboxState(crifake.SandboxID(pod, 0)); st != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Errorf("sandbox is %v, want stopped", st)
	}
	if n := h.backoffEntries(pod.UID); n != 0 {
		t.Errorf("back-off kept for %d containers", n)
	}
	if wait, _ := h.s.pulls.Wait(pod.UID, "img"); wait != 0 {
		t.Errorf("pull back-off kept: %s", wait)
	}
	if ev := h.events.Reasons(pod.UID); ev[len(ev)-1] != "Terminated" {
		t.Errorf("events %v", ev)
	}
	h.s.Close()
	if sbs, cs := h.podObjects(pod.UID); len(sbs) != 1 || len(cs) != 2 {
		t.Errorf("kept: %v %v, want the sandbox and both containers", sbs, cs)
	}
	if n := h.calls("RemoveContainer") + h.calls("RemovePodSandbox"); n != 0 {
		t.Errorf("%d removals of a pod that was not deleted", n)
	}
}

// A pod that completed stays completed for the next syncer on the same
// runtime (an agent restart): SyncPod reports it terminal with its exit
// codes and creates nothing, whatever the restart policy that ended it;
// an Always pod runs again in a new sandbox.
func TestCompletedPodStaysCompletedForNextSyncer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		policy   v1.RestartPolicy
		codes    [2]int32
		terminal bool
		phase    v1.PodPhase
	}{
		{"Never failed", v1.RestartPolicyNever, [2]int32{0, 3}, true, v1.PodFailed},
		{"Never succeeded", v1.RestartPolicyNever, [2]int32{0, 0}, true, v1.PodSucceeded},
		{"OnFailure succeeded", v1.RestartPolicyOnFailure, [2]int32{0, 0}, true, v1.PodSucceeded},
		{"Always", v1.RestartPolicyAlways, [2]int32{0, 3}, false, v1.PodRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.MakePod("p", tc.policy, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
			h.mustSync(pod)
			h.exit(crifake.ContainerID(pod, 0, "a", 0), tc.codes[0])
			h.exit(crifake.ContainerID(pod, 0, "b", 0), tc.codes[1])
			if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := h.s.SyncTerminatedPod(context.Background(), pod, nil); err != nil {
				t.Fatal(err)
			}
			h.s.Close()
			creates := h.calls("RunPodSandbox") + h.calls("CreateContainer")

			next := NewSyncer(h.rt, h.imgs, Options{Statuses: h.statuses, Events: h.events, Clock: h.clock})
			defer next.Close()
			terminal, err := next.SyncPod(context.Background(), 0, pod, nil, nil)
			if err != nil || terminal != tc.terminal {
				t.Fatalf("next SyncPod = %v, %v; want %v, nil", terminal, err, tc.terminal)
			}
			st := h.statuses.last(t, pod.UID)
			if st.Phase != tc.phase {
				t.Errorf("phase %s, want %s", st.Phase, tc.phase)
			}
			if !tc.terminal {
				return
			}
			if n := h.calls("RunPodSandbox") + h.calls("CreateContainer"); n != creates {
				t.Errorf("%d sandboxes or containers created for a completed pod", n-creates)
			}
			for i, cs := range st.ContainerStatuses {
				if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != tc.codes[i] {
					t.Errorf("container %s: %+v, want terminated with %d", cs.Name, cs.State, tc.codes[i])
				}
			}
		})
	}
}

// terminatedPod runs a Never pod to completion through termination: its
// containers exited, its sandbox stopped, all kept.
func terminatedPod(h *harness, name string) *v1.Pod {
	h.t.Helper()
	pod := completedPod(h, name)
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		h.t.Fatal(err)
	}
	if err := h.s.SyncTerminatedPod(context.Background(), pod, nil); err != nil {
		h.t.Fatal(err)
	}
	return pod
}

func TestSyncTerminatedPodErrors(t *testing.T) {
	t.Run("removal errors are left to the runtime", func(t *testing.T) {
		h := newHarness(t, Options{}, "img")
		pod := terminatedPod(h, "p")
		h.fake.InjectError("RemoveContainer", errors.New("injected"))
		h.fake.InjectError("RemovePodSandbox", errors.New("injected"))
		h.s.RemoveDeadPod(pod.UID)
		h.s.Close()
		if sbs, cs := h.podObjects(pod.UID); len(sbs) != 1 || len(cs) != 1 {
			t.Errorf("left: %v %v", sbs, cs)
		}
	})
	t.Run("sandbox stop fails", func(t *testing.T) {
		h := newHarness(t, Options{}, "img")
		pod := completedPod(h, "p")
		h.fake.InjectError("StopPodSandbox", errors.New("injected"))
		if err := h.s.SyncTerminatedPod(context.Background(), pod, nil); err == nil || !strings.Contains(err.Error(), "injected") {
			t.Fatalf("SyncTerminatedPod = %v", err)
		}
		if st := h.sandboxState(crifake.SandboxID(pod, 0)); st != runtimeapi.PodSandboxState_SANDBOX_READY {
			t.Fatalf("sandbox is %v", st)
		}
		if err := h.s.SyncTerminatedPod(context.Background(), pod, nil); err != nil {
			t.Fatalf("retry: %v", err)
		}
		if st := h.sandboxState(crifake.SandboxID(pod, 0)); st != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			t.Errorf("sandbox is %v after the retry", st)
		}
	})
	t.Run("runtime read fails", func(t *testing.T) {
		h := newHarness(t, Options{}, "img")
		pod := completedPod(h, "p")
		h.fake.InjectError("ListContainers", errors.New("injected"))
		if err := h.s.SyncTerminatedPod(context.Background(), pod, nil); err == nil || !strings.Contains(err.Error(), "injected") {
			t.Fatalf("SyncTerminatedPod = %v", err)
		}
		if n := h.calls("StopPodSandbox"); n != 0 {
			t.Errorf("StopPodSandbox called %d times", n)
		}
	})
	t.Run("nothing in the runtime", func(t *testing.T) {
		h := newHarness(t, Options{}, "img")
		pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
		if err := h.s.SyncTerminatedPod(context.Background(), pod, nil); err != nil {
			t.Fatalf("SyncTerminatedPod: %v", err)
		}
	})
}

// Each failing runtime call fails the call; the retry finishes the job.
func TestSyncTerminatingErrors(t *testing.T) {
	for _, method := range []string{"ListPodSandbox", "ListContainers", "ContainerStatus", "StopContainer", "StopPodSandbox"} {
		for _, runtimeOnly := range []bool{false, true} {
			h := newHarness(t, Options{}, "img")
			pod := runningPod(h, "p")
			call := func() error {
				if runtimeOnly {
					return h.s.SyncTerminatingRuntimePod(context.Background(), &worker.RunningPod{ID: pod.UID})
				}
				return h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil)
			}
			h.fake.InjectError(method, errors.New("injected"))
			if err := call(); err == nil || !strings.Contains(err.Error(), "injected") {
				t.Errorf("%s runtimeOnly=%v: %v, want the injected error", method, runtimeOnly, err)
			}
			h.s.Close()
			if n := h.calls("RemoveContainer") + h.calls("RemovePodSandbox"); n != 0 {
				t.Errorf("%s runtimeOnly=%v: %d removals after a failure", method, runtimeOnly, n)
			}
			if err := call(); err != nil {
				t.Errorf("%s runtimeOnly=%v: retry: %v", method, runtimeOnly, err)
			}
			h.s.Close()
			sbs, cs := h.podObjects(pod.UID)
			if runtimeOnly && len(sbs)+len(cs) > 0 {
				t.Errorf("%s: left behind %v %v", method, sbs, cs)
			}
			if !runtimeOnly && h.statuses.last(t, pod.UID).Phase != v1.PodFailed {
				t.Errorf("%s: no final status", method)
			}
		}
	}
}

// verifyStopped's own read can fail too.
func TestSyncTerminatingVerifyReadError(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := runningPod(h, "p")
	h.fake.Lock()
	h.fake.Errors["ListPodSandbox"] = []error{nil, errors.New("injected")}
	h.fake.Unlock()
	written := h.statuses.count(pod.UID)
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("SyncTerminatingPod = %v", err)
	}
	if h.statuses.count(pod.UID) != written {
		t.Error("final status written without a verified stop")
	}
}

// A runtime-only pod's grace period is what its running containers
// recorded, the longest if they differ; without one, the kubelet's 1 s.
func TestRecordedGracePeriod(t *testing.T) {
	ctr := func(state runtimeapi.ContainerState, grace string) *runtimeapi.ContainerStatus {
		c := &runtimeapi.ContainerStatus{State: state}
		if grace != "-" {
			c.Annotations = map[string]string{cri.GracePeriodAnnotation: grace}
		}
		return c
	}
	running, exited := runtimeapi.ContainerState_CONTAINER_RUNNING, runtimeapi.ContainerState_CONTAINER_EXITED
	for _, tc := range []struct {
		name       string
		containers []*runtimeapi.ContainerStatus
		want       int64
	}{
		{"no container", nil, runtimeOnlyGracePeriod},
		{"none recorded", []*runtimeapi.ContainerStatus{ctr(running, "-")}, runtimeOnlyGracePeriod},
		{"recorded", []*runtimeapi.ContainerStatus{ctr(running, "45")}, 45},
		{"recorded zero", []*runtimeapi.ContainerStatus{ctr(running, "0")}, 0},
		{"the longest", []*runtimeapi.ContainerStatus{ctr(running, "10"), ctr(running, "60"), ctr(running, "-")}, 60},
		{"exited ones do not count", []*runtimeapi.ContainerStatus{ctr(exited, "600"), ctr(running, "5")}, 5},
		{"invalid", []*runtimeapi.ContainerStatus{ctr(running, "soon"), ctr(running, "-4")}, runtimeOnlyGracePeriod},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := recordedGracePeriod(&cri.PodRuntime{Containers: tc.containers}); got != tc.want {
				t.Errorf("recordedGracePeriod = %d, want %d", got, tc.want)
			}
		})
	}
}
