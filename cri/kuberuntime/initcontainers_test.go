package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/crifake"
)

var stateNames = map[runtimeapi.ContainerState]string{
	runtimeapi.ContainerState_CONTAINER_CREATED: "created",
	runtimeapi.ContainerState_CONTAINER_RUNNING: "running",
	runtimeapi.ContainerState_CONTAINER_EXITED:  "exited",
	runtimeapi.ContainerState_CONTAINER_UNKNOWN: "unknown",
}

// instances maps each container name of pod to the states of its
// instances, by attempt ("exited running": one exited, its restart runs).
func (h *harness) instances(pod *v1.Pod) map[string]string {
	h.fake.Lock()
	defer h.fake.Unlock()
	byName := map[string][]string{}
	for _, c := range h.fake.Containers {
		if c.Labels[cri.PodUIDLabel] != string(pod.UID) {
			continue
		}
		name, attempt := c.Metadata.Name, int(c.Metadata.Attempt)
		for len(byName[name]) <= attempt {
			byName[name] = append(byName[name], "none")
		}
		byName[name][attempt] = stateNames[c.State]
	}
	out := map[string]string{}
	for name, states := range byName {
		out[name] = strings.Join(states, " ")
	}
	return out
}

// newest is the ID of the newest instance of container name of pod.
func (h *harness) newest(pod *v1.Pod, name string) string {
	h.t.Helper()
	h.fake.Lock()
	defer h.fake.Unlock()
	id, attempt := "", -1
	for cid, c := range h.fake.Containers {
		if c.Labels[cri.PodUIDLabel] == string(pod.UID) && c.Metadata.Name == name && int(c.Metadata.Attempt) > attempt {
			id, attempt = cid, int(c.Metadata.Attempt)
		}
	}
	if id == "" {
		h.t.Fatalf("pod %s has no container %s", pod.Name, name)
	}
	return id
}

// step is one round of a scenario: containers exit, time passes, then
// SyncPod runs and the outcome is checked.
type step struct {
	exit    map[string]int32 // newest instance of each container exits with the code
	advance time.Duration    // the clock moves on before the sync
	// terminal and err are SyncPod's results (err matched with errors.Is).
	terminal bool
	err      error
	want     map[string]string // the pod's instances, as harness.instances has them
	phase    v1.PodPhase
}

// runSteps runs a scenario on pod.
func runSteps(t *testing.T, h *harness, pod *v1.Pod, steps []step) {
	t.Helper()
	for i, s := range steps {
		for _, name := range slices.Sorted(maps.Keys(s.exit)) {
			h.exit(h.newest(pod, name), s.exit[name])
		}
		h.clock.Step(s.advance)
		terminal, err := h.syncPod(pod)
		if terminal != s.terminal || (s.err == nil && err != nil) || !errors.Is(err, s.err) {
			t.Fatalf("step %d: SyncPod = %v, %v; want %v, %v", i, terminal, err, s.terminal, s.err)
		}
		if got := h.instances(pod); !maps.Equal(got, s.want) {
			t.Fatalf("step %d: containers %v, want %v", i, got, s.want)
		}
		if st := h.statuses.last(t, pod.UID); st.Phase != s.phase {
			t.Fatalf("step %d: phase %s, want %s (init %s; containers %s)", i, st.Phase, s.phase,
				crifake.Statuses(st.InitContainerStatuses), crifake.Statuses(st.ContainerStatuses))
		}
	}
}

var (
	always    = v1.RestartPolicyAlways
	onFailure = v1.RestartPolicyOnFailure
	never     = v1.RestartPolicyNever
)

func TestSyncPodInitContainers(t *testing.T) {
	type scenario struct {
		name     string
		policies []v1.RestartPolicy
		inits    []crifake.Init
		steps    []step
	}
	regular := []crifake.Init{{Name: "i1"}, {Name: "i2"}}
	sidecarFirst := []crifake.Init{{Name: "sc", Sidecar: true}, {Name: "i1"}}
	sidecarLast := []crifake.Init{{Name: "i1"}, {Name: "sc", Sidecar: true}}
	pending, running := v1.PodPending, v1.PodRunning
	all := []v1.RestartPolicy{always, onFailure, never}
	for _, sc := range []scenario{
		{
			name: "one at a time, in order, then the containers", policies: all, inits: regular,
			steps: []step{
				{want: map[string]string{"i1": "running"}, phase: pending},
				{want: map[string]string{"i1": "running"}, phase: pending}, // i1 is waited for
				{exit: map[string]int32{"i1": 0}, want: map[string]string{"i1": "exited", "i2": "running"}, phase: pending},
				{exit: map[string]int32{"i2": 0}, want: map[string]string{"i1": "exited", "i2": "exited", "app": "running"}, phase: running},
				// Completed init containers never run again.
				{want: map[string]string{"i1": "exited", "i2": "exited", "app": "running"}, phase: running},
			},
		},
		{
			name: "a failure is restarted with the crash-loop back-off", policies: []v1.RestartPolicy{always, onFailure}, inits: regular,
			steps: []step{
				{want: map[string]string{"i1": "running"}, phase: pending},
				{exit: map[string]int32{"i1": 1}, want: map[string]string{"i1": "exited running"}, phase: pending},
				{exit: map[string]int32{"i1": 2}, err: ErrCrashLoopBackOff, want: map[string]string{"i1": "exited exited"}, phase: pending},
				{advance: 5 * time.Second, err: ErrCrashLoopBackOff, want: map[string]string{"i1": "exited exited"}, phase: pending},
				{advance: 5 * time.Second, want: map[string]string{"i1": "exited exited running"}, phase: pending},
				{exit: map[string]int32{"i1": 0}, want: map[string]string{"i1": "exited exited exited", "i2": "running"}, phase: pending},
			},
		},
		{
			name: "Never: the first one fails, the pod is over", policies: []v1.RestartPolicy{never}, inits: regular,
			steps: []step{
				{want: map[string]string{"i1": "running"}, phase: pending},
				{exit: map[string]int32{"i1": 1}, terminal: true, want: map[string]string{"i1": "exited"}, phase: v1.PodFailed},
				{terminal: true, want: map[string]string{"i1": "exited"}, phase: v1.PodFailed},
			},
		},
		{
			name: "Never: the second one fails, the pod is over", policies: []v1.RestartPolicy{never}, inits: regular,
			steps: []step{
				{want: map[string]string{"i1": "running"}, phase: pending},
				{exit: map[string]int32{"i1": 0}, want: map[string]string{"i1": "exited", "i2": "running"}, phase: pending},
				{exit: map[string]int32{"i2": 137}, terminal: true, want: map[string]string{"i1": "exited", "i2": "exited"}, phase: v1.PodFailed},
			},
		},
		{
			name: "a sidecar starts, and the next one once it runs", policies: all, inits: sidecarFirst,
			steps: []step{
				{want: map[string]string{"sc": "running"}, phase: pending},
				{want: map[string]string{"sc": "running", "i1": "running"}, phase: pending},
				{exit: map[string]int32{"i1": 0}, want: map[string]string{"sc": "running", "i1": "exited", "app": "running"}, phase: running},
			},
		},
		{
			name: "the containers start once the last init container, a sidecar, runs", policies: all, inits: sidecarLast,
			steps: []step{
				{want: map[string]string{"i1": "running"}, phase: pending},
				{exit: map[string]int32{"i1": 0}, want: map[string]string{"i1": "exited", "sc": "running"}, phase: pending},
				{want: map[string]string{"i1": "exited", "sc": "running", "app": "running"}, phase: running},
			},
		},
		{
			name: "a sidecar that exits during initialization is restarted; the init container keeps running", policies: all, inits: sidecarFirst,
			steps: []step{
				{want: map[string]string{"sc": "running"}, phase: pending},
				{want: map[string]string{"sc": "running", "i1": "running"}, phase: pending},
				{exit: map[string]int32{"sc": 1}, want: map[string]string{"sc": "exited running", "i1": "running"}, phase: pending},
				{exit: map[string]int32{"sc": 1}, err: ErrCrashLoopBackOff, want: map[string]string{"sc": "exited exited", "i1": "running"}, phase: pending},
				// The back-off does not hold up the init container's successor.
				{exit: map[string]int32{"i1": 0}, err: ErrCrashLoopBackOff, want: map[string]string{"sc": "exited exited", "i1": "exited", "app": "running"}, phase: running},
				{advance: 10 * time.Second, want: map[string]string{"sc": "exited exited running", "i1": "exited", "app": "running"}, phase: running},
			},
		},
		{
			name: "a sidecar is restarted whatever the policy and exit code", policies: all, inits: sidecarFirst,
			steps: []step{
				{want: map[string]string{"sc": "running"}, phase: pending},
				{want: map[string]string{"sc": "running", "i1": "running"}, phase: pending},
				{exit: map[string]int32{"i1": 0}, want: map[string]string{"sc": "running", "i1": "exited", "app": "running"}, phase: running},
				{exit: map[string]int32{"sc": 0}, want: map[string]string{"sc": "exited running", "i1": "exited", "app": "running"}, phase: running},
				{exit: map[string]int32{"sc": 1}, err: ErrCrashLoopBackOff, want: map[string]string{"sc": "exited exited", "i1": "exited", "app": "running"}, phase: running},
				{advance: 10 * time.Second, want: map[string]string{"sc": "exited exited running", "i1": "exited", "app": "running"}, phase: running},
			},
		},
		{
			name: "a pod with a sidecar finishes when its containers succeeded", policies: []v1.RestartPolicy{never, onFailure}, inits: []crifake.Init{{Name: "sc", Sidecar: true}},
			steps: []step{
				{want: map[string]string{"sc": "running"}, phase: pending},
				{want: map[string]string{"sc": "running", "app": "running"}, phase: running},
				// The sidecar still runs: termination stops it.
				{exit: map[string]int32{"app": 0}, terminal: true, want: map[string]string{"sc": "running", "app": "exited"}, phase: v1.PodSucceeded},
			},
		},
		{
			name: "a Never pod with a sidecar fails when its container failed", policies: []v1.RestartPolicy{never}, inits: []crifake.Init{{Name: "sc", Sidecar: true}},
			steps: []step{
				{want: map[string]string{"sc": "running"}, phase: pending},
				{want: map[string]string{"sc": "running", "app": "running"}, phase: running},
				{exit: map[string]int32{"app": 1}, terminal: true, want: map[string]string{"sc": "running", "app": "exited"}, phase: v1.PodFailed},
			},
		},
		{
			name: "a pod with a sidecar keeps running when its container failed", policies: []v1.RestartPolicy{onFailure}, inits: []crifake.Init{{Name: "sc", Sidecar: true}},
			steps: []step{
				{want: map[string]string{"sc": "running"}, phase: pending},
				{want: map[string]string{"sc": "running", "app": "running"}, phase: running},
				{exit: map[string]int32{"app": 1}, want: map[string]string{"sc": "running", "app": "exited running"}, phase: running},
			},
		},
	} {
		for _, policy := range sc.policies {
			t.Run(fmt.Sprintf("%s/%s", sc.name, policy), func(t *testing.T) {
				h := newHarness(t, Options{RestartBackoff: 10 * time.Second}, "img")
				pod := crifake.WithInits(crifake.MakePod("p", policy, crifake.Ctr{Name: "app"}), sc.inits...)
				runSteps(t, h, pod, sc.steps)
			})
		}
	}
}

// Each sandbox initializes the pod anew, as the kubelet does: after the
// sandbox died, the init containers run again before the containers.
func TestSyncPodInitContainersSandboxDied(t *testing.T) {
	for _, policy := range []v1.RestartPolicy{always, onFailure} {
		t.Run(string(policy), func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.WithInits(crifake.MakePod("p", policy, crifake.Ctr{Name: "app"}), crifake.Init{Name: "sc", Sidecar: true}, crifake.Init{Name: "i1"})
			h.mustSync(pod)
			h.mustSync(pod)
			h.exit(h.newest(pod, "i1"), 0)
			h.mustSync(pod)
			h.exit(h.newest(pod, "app"), 1)
			h.killSandbox(crifake.SandboxID(pod, 0))

			h.mustSync(pod)
			// The old sidecar was stopped; the new sandbox starts over.
			want := map[string]string{"sc": "exited running", "i1": "exited", "app": "exited"}
			if got := h.instances(pod); !maps.Equal(got, want) {
				t.Fatalf("containers %v, want %v", got, want)
			}
			if h.containerState(crifake.ContainerID(pod, 1, "sc", 1)) != runtimeapi.ContainerState_CONTAINER_RUNNING {
				t.Fatalf("the sidecar does not run in the new sandbox")
			}
			st := h.statuses.last(t, pod.UID)
			if got := crifake.Statuses(st.InitContainerStatuses); got != "sc=running i1=waiting(PodInitializing)" {
				t.Errorf("init container statuses %s", got)
			}
			if st.Phase != v1.PodPending || crifake.Condition(st, v1.PodInitialized).Status != v1.ConditionFalse {
				t.Errorf("phase %s, Initialized %s", st.Phase, crifake.Condition(st, v1.PodInitialized).Status)
			}
			h.mustSync(pod)
			h.exit(h.newest(pod, "i1"), 0)
			h.mustSync(pod)
			want = map[string]string{"sc": "exited running", "i1": "exited exited", "app": "exited running"}
			if got := h.instances(pod); !maps.Equal(got, want) {
				t.Fatalf("containers %v, want %v", got, want)
			}
			if h.containerState(crifake.ContainerID(pod, 1, "app", 1)) != runtimeapi.ContainerState_CONTAINER_RUNNING {
				t.Fatalf("the container does not run in the new sandbox")
			}
		})
	}
}

// A Never pod whose sandbox died is over once any of its containers ran,
// an init container included, as in the kubelet: it is not initialized
// twice.
func TestSyncPodInitContainersSandboxDiedNever(t *testing.T) {
	for _, initDone := range []bool{false, true} {
		t.Run(fmt.Sprintf("init done %v", initDone), func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.WithInits(crifake.MakePod("p", never, crifake.Ctr{Name: "app"}), crifake.Init{Name: "i1"})
			h.mustSync(pod)
			if initDone {
				h.exit(h.newest(pod, "i1"), 0)
				h.mustSync(pod)
			}
			h.killSandbox(crifake.SandboxID(pod, 0))
			terminal, err := h.syncPod(pod)
			if !terminal || err != nil {
				t.Fatalf("SyncPod = %v, %v; want true, nil", terminal, err)
			}
			if n := h.calls("RunPodSandbox"); n != 1 {
				t.Errorf("RunPodSandbox called %d times", n)
			}
			if st := h.statuses.last(t, pod.UID); st.Phase != v1.PodFailed {
				t.Errorf("phase %s, want Failed", st.Phase)
			}
		})
	}
}

// The statuses through a pod's initialization: init container statuses,
// the Initialized condition, the phase and readiness.
func TestSyncPodInitContainerStatuses(t *testing.T) {
	h := newHarness(t, Options{RuntimeName: "rt"}, "img")
	pod := crifake.WithInits(crifake.MakePod("p", always, crifake.Ctr{Name: "app"}), crifake.Init{Name: "sc", Sidecar: true}, crifake.Init{Name: "i1"})
	for i, tc := range []struct {
		exit           map[string]int32
		init, ctrs     string
		phase          v1.PodPhase
		initialized    v1.ConditionStatus
		incomplete     string // the Initialized condition's message
		ready          v1.ConditionStatus
		initReady      []bool
		wantBackOffErr bool
	}{
		{
			init: "sc=running i1=waiting(PodInitializing)", ctrs: "app=waiting(PodInitializing)",
			phase: v1.PodPending, initialized: v1.ConditionFalse, incomplete: "containers with incomplete status: [i1]",
			ready: v1.ConditionFalse, initReady: []bool{true, false},
		},
		{
			init: "sc=running i1=running", ctrs: "app=waiting(PodInitializing)",
			phase: v1.PodPending, initialized: v1.ConditionFalse, incomplete: "containers with incomplete status: [i1]",
			ready: v1.ConditionFalse, initReady: []bool{true, false},
		},
		{
			exit: map[string]int32{"i1": 3},
			init: "sc=running i1=running", ctrs: "app=waiting(PodInitializing)", // restarted at once
			phase: v1.PodPending, initialized: v1.ConditionFalse, incomplete: "containers with incomplete status: [i1]",
			ready: v1.ConditionFalse, initReady: []bool{true, false},
		},
		{
			exit: map[string]int32{"i1": 3}, wantBackOffErr: true,
			init: "sc=running i1=waiting(CrashLoopBackOff)", ctrs: "app=waiting(PodInitializing)",
			phase: v1.PodPending, initialized: v1.ConditionFalse, incomplete: "containers with incomplete status: [i1]",
			ready: v1.ConditionFalse, initReady: []bool{true, false},
		},
		{
			exit: map[string]int32{"sc": 1}, wantBackOffErr: true, // i1 still in its back-off; sc restarted at once
			init: "sc=running i1=waiting(CrashLoopBackOff)", ctrs: "app=waiting(PodInitializing)",
			phase: v1.PodPending, initialized: v1.ConditionFalse, incomplete: "containers with incomplete status: [i1]",
			ready: v1.ConditionFalse, initReady: []bool{true, false},
		},
	} {
		for _, name := range slices.Sorted(maps.Keys(tc.exit)) {
			h.exit(h.newest(pod, name), tc.exit[name])
		}
		terminal, err := h.syncPod(pod)
		if terminal || (err != nil) != tc.wantBackOffErr || (err != nil && !errors.Is(err, ErrCrashLoopBackOff)) {
			t.Fatalf("step %d: SyncPod = %v, %v", i, terminal, err)
		}
		checkInitStatus(t, i, h.statuses.last(t, pod.UID), tc.init, tc.ctrs, tc.phase, tc.initialized, tc.incomplete, tc.ready, tc.initReady)
	}

	// i1 restarts after its back-off and succeeds: the pod is initialized,
	// and ready once its container and its sidecar run.
	h.clock.Step(10 * time.Second)
	h.mustSync(pod)
	h.exit(h.newest(pod, "i1"), 0)
	h.mustSync(pod)
	st := h.statuses.last(t, pod.UID)
	checkInitStatus(t, 5, st, "sc=running i1=exited(0)", "app=running", v1.PodRunning, v1.ConditionTrue, "", v1.ConditionTrue, []bool{true, true})
	sc, i1 := st.InitContainerStatuses[0], st.InitContainerStatuses[1]
	if sc.RestartCount != 1 || sc.ContainerID != "rt://"+h.newest(pod, "sc") || sc.Started == nil || !*sc.Started || sc.Image != "img" {
		t.Errorf("sidecar status %+v", sc)
	}
	if i1.RestartCount != 2 || i1.State.Terminated.Reason != "Completed" || i1.LastTerminationState.Terminated == nil ||
		i1.LastTerminationState.Terminated.ExitCode != 3 || i1.Started == nil || *i1.Started {
		t.Errorf("init container status %+v", i1)
	}

	// A sidecar that exits makes the pod unready; the pod stays
	// initialized and running.
	h.exit(h.newest(pod, "sc"), 1)
	if _, err := h.syncPod(pod); !errors.Is(err, ErrCrashLoopBackOff) {
		t.Fatalf("SyncPod = %v, want the sidecar's back-off", err)
	}
	checkInitStatus(t, 6, h.statuses.last(t, pod.UID), "sc=waiting(CrashLoopBackOff) i1=exited(0)", "app=running",
		v1.PodRunning, v1.ConditionTrue, "", v1.ConditionFalse, []bool{false, true})
}

func checkInitStatus(t *testing.T, step int, st v1.PodStatus, init, ctrs string, phase v1.PodPhase, initialized v1.ConditionStatus,
	incomplete string, ready v1.ConditionStatus, initReady []bool) {
	t.Helper()
	if got := crifake.Statuses(st.InitContainerStatuses); got != init {
		t.Errorf("step %d: init container statuses %s, want %s", step, got, init)
	}
	if got := crifake.Statuses(st.ContainerStatuses); got != ctrs {
		t.Errorf("step %d: container statuses %s, want %s", step, got, ctrs)
	}
	if st.Phase != phase {
		t.Errorf("step %d: phase %s, want %s", step, st.Phase, phase)
	}
	if c := crifake.Condition(st, v1.PodInitialized); c.Status != initialized || c.Message != incomplete ||
		(initialized == v1.ConditionFalse) != (c.Reason == "ContainersNotInitialized") {
		t.Errorf("step %d: Initialized %+v, want %s %q", step, c, initialized, incomplete)
	}
	for _, typ := range []v1.PodConditionType{v1.ContainersReady, v1.PodReady} {
		if c := crifake.Condition(st, typ); c.Status != ready {
			t.Errorf("step %d: %s is %s, want %s", step, typ, c.Status, ready)
		}
	}
	for i, cs := range st.InitContainerStatuses {
		if cs.Ready != initReady[i] {
			t.Errorf("step %d: init container %s ready %v, want %v", step, cs.Name, cs.Ready, initReady[i])
		}
	}
}

// An init container's image that cannot be pulled holds the pod's
// initialization, and shows in its status.
func TestSyncPodInitContainerImageError(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.WithInits(crifake.MakePod("p", always, crifake.Ctr{Name: "app"}), crifake.Init{Name: "i1"})
	pod.Spec.InitContainers[0].Image = "missing"
	h.images.InjectError("PullImage", errors.New("registry down"))
	if _, err := h.syncPod(pod); err == nil || !strings.Contains(err.Error(), "registry down") {
		t.Fatalf("SyncPod = %v, want the pull error", err)
	}
	st := h.statuses.last(t, pod.UID)
	if got := crifake.Statuses(st.InitContainerStatuses) + " " + crifake.Statuses(st.ContainerStatuses); got != "i1=waiting(ErrImagePull) app=waiting(PodInitializing)" {
		t.Errorf("statuses %s", got)
	}
	if st.Phase != v1.PodPending || h.calls("CreateContainer") != 0 {
		t.Errorf("phase %s, %d containers created", st.Phase, h.calls("CreateContainer"))
	}
	h.clock.Step(10 * time.Second) // the pull back-off
	h.mustSync(pod)
	if got := h.instances(pod); !maps.Equal(got, map[string]string{"i1": "running"}) {
		t.Errorf("after the retry: %v", got)
	}
}

// Termination stops every container that did not exit: the init container
// that runs, and the sidecars.
func TestSyncTerminatingPodStopsInitContainers(t *testing.T) {
	for _, tc := range []struct {
		name string
		// steps bring the pod to the state termination finds.
		steps     func(h *harness, pod *v1.Pod)
		wantStop  []string // containers stopped
		wantPhase v1.PodPhase
	}{
		{
			name: "during initialization",
			steps: func(h *harness, pod *v1.Pod) {
				h.mustSync(pod)
				h.mustSync(pod)
			},
			wantStop:  []string{"sc", "i1"},
			wantPhase: v1.PodFailed,
		},
		{
			name: "running",
			steps: func(h *harness, pod *v1.Pod) {
				h.mustSync(pod)
				h.mustSync(pod)
				h.exit(h.newest(pod, "i1"), 0)
				h.mustSync(pod)
			},
			wantStop:  []string{"sc", "app"},
			wantPhase: v1.PodFailed,
		},
		{
			name: "its containers completed",
			steps: func(h *harness, pod *v1.Pod) {
				h.mustSync(pod)
				h.mustSync(pod)
				h.exit(h.newest(pod, "i1"), 0)
				h.mustSync(pod)
				h.exit(h.newest(pod, "app"), 0)
				if terminal, err := h.syncPod(pod); !terminal || err != nil {
					h.t.Fatalf("SyncPod = %v, %v; want true, nil", terminal, err)
				}
			},
			wantStop: []string{"sc"},
			// The sidecar's exit code does not count.
			wantPhase: v1.PodSucceeded,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.WithInits(crifake.MakePod("p", never, crifake.Ctr{Name: "app"}), crifake.Init{Name: "sc", Sidecar: true}, crifake.Init{Name: "i1"})
			tc.steps(h, pod)
			h.rt.ResetStops()
			h.rt.OnStop = func(_ context.Context, id string, _ int64, next func() error) error {
				if err := next(); err != nil {
					return err
				}
				h.fake.Lock()
				defer h.fake.Unlock()
				h.fake.Containers[id].ExitCode = 143 // SIGTERM
				return nil
			}
			var want []crifake.StopCall
			for _, name := range tc.wantStop {
				want = append(want, crifake.StopCall{ID: h.newest(pod, name), Timeout: defaultGracePeriod})
			}
			slices.SortFunc(want, func(a, b crifake.StopCall) int { return strings.Compare(a.ID, b.ID) })

			if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
				t.Fatalf("SyncTerminatingPod: %v", err)
			}
			if got := h.rt.StopCalls(); !slices.Equal(got, want) {
				t.Errorf("stops %v, want %v", got, want)
			}
			for name, states := range h.instances(pod) {
				if strings.Contains(states, "running") {
					t.Errorf("%s still runs: %s", name, states)
				}
			}
			st := h.statuses.last(t, pod.UID)
			if st.Phase != tc.wantPhase {
				t.Errorf("final phase %s, want %s", st.Phase, tc.wantPhase)
			}
			for _, cs := range st.InitContainerStatuses {
				if cs.State.Terminated == nil {
					t.Errorf("final status of %s: %+v", cs.Name, cs.State)
				}
			}
		})
	}
}
