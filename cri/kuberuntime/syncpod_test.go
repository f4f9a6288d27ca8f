package kuberuntime

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakecri "k8s.io/cri-api/pkg/apis/testing"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/logs"
	"github.com/podlife/podlife/internal/crifake"
)

func TestSyncPodCreatesPod(t *testing.T) {
	for _, tc := range []struct {
		name         string
		opts         Options
		present      []string
		grace        *int64
		wantEvents   []string
		wantPulls    int
		wantIDScheme string
		wantGrace    string
	}{
		// A pod of no dnsPolicy is ClusterFirst (as the kubelet falls back):
		// without --cluster-dns its sandbox gets MissingClusterDNS first.
		{
			name:         "images present",
			present:      []string{"img", "img2"},
			wantEvents:   []string{"MissingClusterDNS", "Created", "Started", "Created", "Started"},
			wantIDScheme: "cri://",
			wantGrace:    "30",
		},
		{
			name:         "images pulled",
			grace:        new(int64(17)),
			opts:         Options{RuntimeName: "containerd"},
			wantEvents:   []string{"MissingClusterDNS", "Pulling", "Created", "Started", "Pulling", "Created", "Started"},
			wantPulls:    2,
			wantIDScheme: "containerd://",
			wantGrace:    "17",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts, tc.present...)
			pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}, crifake.Ctr{Name: "side", Image: "img2"})
			pod.Labels = map[string]string{"app": "web", cri.PodUIDLabel: "not-the-uid"}
			pod.Spec.TerminationGracePeriodSeconds = tc.grace
			h.mustSync(pod)

			// One sandbox, ready, labelled.
			if n := h.calls("RunPodSandbox"); n != 1 {
				t.Fatalf("RunPodSandbox called %d times, want 1", n)
			}
			sbID := crifake.SandboxID(pod, 0)
			if st := h.sandboxState(sbID); st != runtimeapi.PodSandboxState_SANDBOX_READY {
				t.Fatalf("sandbox state %v", st)
			}
			h.fake.Lock()
			sbLabels := h.fake.Sandboxes[sbID].Labels
			h.fake.Unlock()
			for k, want := range map[string]string{
				cri.PodNameLabel: "web", cri.PodNamespaceLabel: "ns", cri.PodUIDLabel: "uid-web", "app": "web",
			} {
				if sbLabels[k] != want {
					t.Errorf("sandbox label %s = %q, want %q", k, sbLabels[k], want)
				}
			}

			// Every container created in it, started and labelled.
			for _, name := range []string{"app", "side"} {
				c := h.container(crifake.ContainerID(pod, 0, name, 0))
				if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
					t.Errorf("container %s state %v", name, c.State)
				}
				for k, want := range map[string]string{
					cri.PodNameLabel: "web", cri.PodNamespaceLabel: "ns", cri.PodUIDLabel: "uid-web", cri.ContainerNameLabel: name,
				} {
					if c.Labels[k] != want {
						t.Errorf("container %s label %s = %q, want %q", name, k, c.Labels[k], want)
					}
				}
				if c.Annotations[cri.RestartCountAnnotation] != "0" || c.Annotations[cri.GracePeriodAnnotation] != tc.wantGrace {
					t.Errorf("container %s annotations %v", name, c.Annotations)
				}
			}
			if n := h.calls("CreateContainer"); n != 2 {
				t.Errorf("CreateContainer called %d times, want 2", n)
			}
			if n := h.imageCalls("PullImage"); n != tc.wantPulls {
				t.Errorf("PullImage called %d times, want %d", n, tc.wantPulls)
			}

			// The status.
			st := h.statuses.last(t, pod.UID)
			if st.Phase != v1.PodRunning {
				t.Errorf("phase %s, want Running", st.Phase)
			}
			if st.PodIP != fakecri.FakePodSandboxIPs[0] || len(st.PodIPs) != 1 || st.PodIPs[0].IP != st.PodIP {
				t.Errorf("pod IP %q %v", st.PodIP, st.PodIPs)
			}
			if st.StartTime == nil {
				t.Error("no start time")
			}
			if len(st.ContainerStatuses) != 2 {
				t.Fatalf("container statuses %+v", st.ContainerStatuses)
			}
			for i, name := range []string{"app", "side"} {
				cs := st.ContainerStatuses[i]
				if cs.Name != name || cs.Image != pod.Spec.Containers[i].Image || cs.State.Running == nil || !cs.Ready ||
					cs.Started == nil || !*cs.Started || cs.RestartCount != 0 ||
					cs.ContainerID != tc.wantIDScheme+crifake.ContainerID(pod, 0, name, 0) {
					t.Errorf("status of %s: %+v", name, cs)
				}
			}
			for _, c := range st.Conditions {
				if c.Status != v1.ConditionTrue {
					t.Errorf("condition %s is %s", c.Type, c.Status)
				}
			}

			// Events, in order.
			if got := h.events.Reasons(pod.UID); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events %v, want %v", got, tc.wantEvents)
			}

			// A resync of a running pod changes nothing.
			h.events.Reset()
			before := len(h.fake.GetCalls())
			h.mustSync(pod)
			for m, want := range map[string]int{"RunPodSandbox": 1, "CreateContainer": 2, "StartContainer": 2, "StopContainer": 0} {
				if n := h.calls(m); n != want {
					t.Errorf("after the resync %s was called %d times, want %d", m, n, want)
				}
			}
			if got := h.events.Reasons(pod.UID); len(got) != 0 {
				t.Errorf("resync recorded events %v", got)
			}
			if len(h.fake.GetCalls()) == before {
				t.Error("resync did not read the runtime")
			}
			if st := h.statuses.last(t, pod.UID); st.Phase != v1.PodRunning {
				t.Errorf("phase after resync %s", st.Phase)
			}
		})
	}
}

func TestSyncPodLogDirectory(t *testing.T) {
	for _, root := range []string{"", t.TempDir()} {
		h := newHarness(t, Options{LogRoot: root}, "img")
		var logPaths []string
		h.rt.OnCreate = func(_ context.Context, _ string, cfg *runtimeapi.ContainerConfig) error {
			logPaths = append(logPaths, cfg.LogPath)
			return nil
		}
		pod := crifake.MakePod("logs", v1.RestartPolicyAlways, crifake.Ctr{Name: "c"})
		h.mustSync(pod)
		h.exit(crifake.ContainerID(pod, 0, "c", 0), 1)
		if root != "" {
			// The removal of a previous incarnation of the UID took the
			// directory: the next container's creation makes it again.
			dir, err := logs.PodDir(root, pod)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}
		h.mustSync(pod)
		want := []string{"", ""}
		if root != "" {
			want = []string{"c/0.log", "c/1.log"}
			dir, err := logs.PodDir(root, pod)
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				t.Fatalf("log directory %s: %v", dir, err)
			}
		}
		if !slices.Equal(logPaths, want) {
			t.Errorf("root %q: log paths %q, want %q", root, logPaths, want)
		}
	}
}

// No container may start once termination was requested: the engine
// cancels SyncPod's ctx for that.
func TestSyncPodCancelledStartsNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(h *harness, pod *v1.Pod)
		// wantCreates is CreateContainer calls in all.
		wantCreates int
	}{
		{
			name:  "new pod",
			setup: func(*harness, *v1.Pod) {},
		},
		{
			name: "created container left by an earlier sync",
			setup: func(h *harness, pod *v1.Pod) {
				ctx := context.Background()
				cfg, err := sandboxConfig(pod, 0, "")
				if err != nil {
					h.t.Fatal(err)
				}
				id, err := h.fake.RunPodSandbox(ctx, cfg, "")
				if err != nil {
					h.t.Fatal(err)
				}
				ccfg, err := containerConfig(pod, &pod.Spec.Containers[0], 0, false)
				if err != nil {
					h.t.Fatal(err)
				}
				if _, err := h.fake.CreateContainer(ctx, id, ccfg, cfg); err != nil {
					h.t.Fatal(err)
				}
			},
			wantCreates: 1,
		},
		{
			name: "exited container due for a restart",
			setup: func(h *harness, pod *v1.Pod) {
				h.mustSync(pod)
				h.exit(crifake.ContainerID(pod, 0, "a", 0), 1)
				h.exit(crifake.ContainerID(pod, 0, "b", 0), 0)
			},
			wantCreates: 2,
		},
		{
			name: "sandbox died",
			setup: func(h *harness, pod *v1.Pod) {
				h.mustSync(pod)
				h.exit(crifake.ContainerID(pod, 0, "a", 0), 1)
				h.exit(crifake.ContainerID(pod, 0, "b", 0), 0)
				h.killSandbox(crifake.SandboxID(pod, 0))
			},
			wantCreates: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
			tc.setup(h, pod)
			starts, sandboxes := h.calls("StartContainer"), h.calls("RunPodSandbox")

			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			terminal, err := h.s.SyncPod(ctx, 0, pod, nil, nil)
			if terminal || !errors.Is(err, context.Canceled) {
				t.Fatalf("SyncPod = %v, %v; want false, context.Canceled", terminal, err)
			}
			if n := h.calls("StartContainer"); n != starts {
				t.Errorf("StartContainer called %d times after the cancel", n-starts)
			}
			if n := h.calls("CreateContainer"); n != tc.wantCreates {
				t.Errorf("CreateContainer called %d times, want %d", n, tc.wantCreates)
			}
			if n := h.calls("RunPodSandbox"); n != sandboxes {
				t.Errorf("RunPodSandbox called %d times after the cancel", n-sandboxes)
			}
			if slices.Contains(h.events.Reasons(pod.UID), "BackOff") {
				t.Error("back-off recorded for a cancelled sync")
			}
		})
	}
}

func TestSyncPodCancelledBetweenContainers(t *testing.T) {
	for _, tc := range []struct {
		name string
		// hook installs a cancel on h's runtime.
		hook func(h *harness, cancel context.CancelFunc)
		want map[string]runtimeapi.ContainerState // by container; absent: never created
	}{
		{
			name: "after the first start",
			hook: func(h *harness, cancel context.CancelFunc) {
				h.rt.OnStart = func(_ context.Context, _ string, next func() error) error {
					err := next()
					cancel()
					return err
				}
			},
			want: map[string]runtimeapi.ContainerState{"a": runtimeapi.ContainerState_CONTAINER_RUNNING},
		},
		{
			name: "while the second is created",
			hook: func(h *harness, cancel context.CancelFunc) {
				h.rt.OnCreate = func(_ context.Context, _ string, cfg *runtimeapi.ContainerConfig) error {
					if cfg.Metadata.Name == "b" {
						cancel()
					}
					return nil
				}
			},
			want: map[string]runtimeapi.ContainerState{
				"a": runtimeapi.ContainerState_CONTAINER_RUNNING,
				"b": runtimeapi.ContainerState_CONTAINER_CREATED,
			},
		},
		{
			name: "while the second's image is pulled",
			hook: func(h *harness, cancel context.CancelFunc) {
				h.imgs.OnPull = func(_ context.Context, image string, next func() (string, error)) (string, error) {
					if image == "img-b" {
						cancel()
					}
					return next()
				}
			},
			want: map[string]runtimeapi.ContainerState{"a": runtimeapi.ContainerState_CONTAINER_RUNNING},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b", Image: "img-b"}, crifake.Ctr{Name: "c"})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tc.hook(h, cancel)
			terminal, err := h.s.SyncPod(ctx, 0, pod, nil, nil)
			if terminal || !errors.Is(err, context.Canceled) {
				t.Fatalf("SyncPod = %v, %v; want false, context.Canceled", terminal, err)
			}
			_, have := h.podObjects(pod.UID)
			var want []string
			for name := range tc.want {
				want = append(want, crifake.ContainerID(pod, 0, name, 0))
			}
			slices.Sort(want)
			if !slices.Equal(have, want) {
				t.Fatalf("containers %v, want %v", have, want)
			}
			for name, st := range tc.want {
				if got := h.containerState(crifake.ContainerID(pod, 0, name, 0)); got != st {
					t.Errorf("container %s is %v, want %v", name, got, st)
				}
			}
			if n := h.calls("StartContainer"); n != 1 {
				t.Errorf("StartContainer called %d times, want 1", n)
			}
		})
	}
}

func TestSyncPodRestartNever(t *testing.T) {
	for _, tc := range []struct {
		name         string
		exits        map[string]int32 // container -> exit code; others keep running
		wantTerminal bool
		wantPhase    v1.PodPhase
	}{
		{"one of two exited 0", map[string]int32{"a": 0}, false, v1.PodRunning},
		{"one of two failed", map[string]int32{"b": 1}, false, v1.PodRunning},
		{"all exited 0", map[string]int32{"a": 0, "b": 0}, true, v1.PodSucceeded},
		{"one failed", map[string]int32{"a": 0, "b": 2}, true, v1.PodFailed},
		{"all failed", map[string]int32{"a": 137, "b": 1}, true, v1.PodFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.MakePod("p", v1.RestartPolicyNever, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
			h.mustSync(pod)
			for name, code := range tc.exits {
				h.exit(crifake.ContainerID(pod, 0, name, 0), code)
			}
			for range 2 { // the second sync sees the same
				terminal, err := h.syncPod(pod)
				if err != nil || terminal != tc.wantTerminal {
					t.Fatalf("SyncPod = %v, %v; want %v, nil", terminal, err, tc.wantTerminal)
				}
			}
			if n := h.calls("CreateContainer"); n != 2 {
				t.Errorf("CreateContainer called %d times: a Never container restarted", n)
			}
			st := h.statuses.last(t, pod.UID)
			if st.Phase != tc.wantPhase {
				t.Errorf("phase %s, want %s", st.Phase, tc.wantPhase)
			}
			for _, cs := range st.ContainerStatuses {
				code, exited := tc.exits[cs.Name]
				switch {
				case exited && (cs.State.Terminated == nil || cs.State.Terminated.ExitCode != code):
					t.Errorf("container %s state %+v, want exit code %d", cs.Name, cs.State, code)
				case !exited && cs.State.Running == nil:
					t.Errorf("container %s state %+v, want running", cs.Name, cs.State)
				}
				if exited && cs.State.Terminated.ContainerID != "cri://"+crifake.ContainerID(pod, 0, cs.Name, 0) {
					t.Errorf("container %s terminated ID %q", cs.Name, cs.State.Terminated.ContainerID)
				}
			}
		})
	}
}

func TestSyncPodRestartOnFailure(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyOnFailure, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
	h.mustSync(pod)

	// b completes: it is not restarted; a fails: it is.
	h.exit(crifake.ContainerID(pod, 0, "b", 0), 0)
	h.exit(crifake.ContainerID(pod, 0, "a", 0), 3)
	h.mustSync(pod)
	if st := h.containerState(crifake.ContainerID(pod, 0, "a", 1)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("restarted a is %v", st)
	}
	if n := h.calls("CreateContainer"); n != 3 {
		t.Fatalf("CreateContainer called %d times, want 3 (b must not restart)", n)
	}
	st := h.statuses.last(t, pod.UID)
	a, b := st.ContainerStatuses[0], st.ContainerStatuses[1]
	if a.RestartCount != 1 || a.State.Running == nil || a.LastTerminationState.Terminated == nil || a.LastTerminationState.Terminated.ExitCode != 3 {
		t.Errorf("status of a: %+v", a)
	}
	if b.State.Terminated == nil || b.State.Terminated.ExitCode != 0 || b.RestartCount != 0 {
		t.Errorf("status of b: %+v", b)
	}
	if st.Phase != v1.PodRunning {
		t.Errorf("phase %s", st.Phase)
	}

	// a completes now: the pod is done.
	h.exit(crifake.ContainerID(pod, 0, "a", 1), 0)
	terminal, err := h.syncPod(pod)
	if !terminal || err != nil {
		t.Fatalf("SyncPod = %v, %v; want true, nil", terminal, err)
	}
	st = h.statuses.last(t, pod.UID)
	if st.Phase != v1.PodSucceeded {
		t.Errorf("phase %s, want Succeeded", st.Phase)
	}
	if a := st.ContainerStatuses[0]; a.RestartCount != 1 || a.State.Terminated == nil || a.State.Terminated.ExitCode != 0 ||
		a.LastTerminationState.Terminated == nil || a.LastTerminationState.Terminated.ExitCode != 3 {
		t.Errorf("final status of a: %+v", a)
	}
}

func TestSyncPodRestartAlwaysRestartsSuccess(t *testing.T) {
	for _, code := range []int32{0, 1} {
		h := newHarness(t, Options{}, "img")
		pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
		h.mustSync(pod)
		h.exit(crifake.ContainerID(pod, 0, "a", 0), code)
		h.mustSync(pod) // the first restart is immediate
		if st := h.containerState(crifake.ContainerID(pod, 0, "a", 1)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Errorf("exit %d: restarted container is %v", code, st)
		}
		c := h.container(crifake.ContainerID(pod, 0, "a", 1))
		if c.Annotations[cri.RestartCountAnnotation] != "1" {
			t.Errorf("exit %d: restart count annotation %q", code, c.Annotations[cri.RestartCountAnnotation])
		}
	}
}

func TestSyncPodCrashLoopBackOff(t *testing.T) {
	h := newHarness(t, Options{RestartBackoff: 10 * time.Second, MaxRestartBackoff: 40 * time.Second}, "img")
	pod := crifake.MakePod("loop", v1.RestartPolicyAlways, crifake.Ctr{Name: "c"}, crifake.Ctr{Name: "steady"})
	h.mustSync(pod)
	h.exit(crifake.ContainerID(pod, 0, "c", 0), 1)
	h.mustSync(pod) // first restart: at once
	attempt := uint32(1)

	for i, delay := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 40 * time.Second} {
		cur := crifake.ContainerID(pod, 0, "c", attempt)
		if st := h.containerState(cur); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Fatalf("round %d: %s is %v", i, cur, st)
		}
		h.exit(cur, 2)
		creates := h.calls("CreateContainer")

		// Inside the back-off: no restart, an error, a waiting status.
		for _, elapsed := range []time.Duration{0, delay - time.Second} {
			h.clock.SetTime(time.Unix(0, h.container(cur).FinishedAt).Add(elapsed))
			terminal, err := h.syncPod(pod)
			if terminal || !errors.Is(err, ErrCrashLoopBackOff) {
				t.Fatalf("round %d +%s: SyncPod = %v, %v; want ErrCrashLoopBackOff", i, elapsed, terminal, err)
			}
			if n := h.calls("CreateContainer"); n != creates {
				t.Fatalf("round %d +%s: restarted inside the back-off", i, elapsed)
			}
			st := h.statuses.last(t, pod.UID)
			cs := st.ContainerStatuses[0]
			if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" {
				t.Fatalf("round %d: state %+v, want waiting CrashLoopBackOff", i, cs.State)
			}
			if want := "back-off " + (delay - elapsed).String(); !strings.Contains(cs.State.Waiting.Message, want) {
				t.Errorf("round %d +%s: message %q, want %q", i, elapsed, cs.State.Waiting.Message, want)
			}
			if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 2 || lt.ContainerID != "cri://"+cur {
				t.Errorf("round %d: last termination %+v", i, cs.LastTerminationState)
			}
			if cs.RestartCount != int32(attempt) || cs.Ready || cs.ContainerID != "cri://"+cur {
				t.Errorf("round %d: status %+v", i, cs)
			}
			if st.Phase != v1.PodRunning {
				t.Errorf("round %d: phase %s, want Running", i, st.Phase)
			}
			if st.ContainerStatuses[1].State.Running == nil {
				t.Errorf("round %d: the steady container is %+v", i, st.ContainerStatuses[1].State)
			}
		}
		if n := len(h.events.Messages(pod.UID, "BackOff")); n != 2*(i+1) {
			t.Errorf("round %d: %d BackOff events", i, n)
		}

		// Once the delay passed: restarted.
		h.clock.SetTime(time.Unix(0, h.container(cur).FinishedAt).Add(delay))
		h.mustSync(pod)
		attempt++
		cs := h.statuses.last(t, pod.UID).ContainerStatuses[0]
		if cs.State.Running == nil || cs.RestartCount != int32(attempt) || cs.LastTerminationState.Terminated == nil {
			t.Fatalf("round %d: after the delay %+v", i, cs)
		}
	}
	if n := h.calls("CreateContainer"); n != 2+1+4 {
		t.Errorf("CreateContainer called %d times", n)
	}
}

func TestSyncPodSandboxDied(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
	pod.Spec.TerminationGracePeriodSeconds = new(int64(7))
	h.mustSync(pod)
	h.exit(crifake.ContainerID(pod, 0, "b", 0), 1) // one already exited, one still runs
	h.killSandbox(crifake.SandboxID(pod, 0))
	h.events.Reset()

	h.mustSync(pod)

	// The old container still running was stopped with the pod's grace.
	if got, want := h.rt.StopCalls(), []crifake.StopCall{{ID: crifake.ContainerID(pod, 0, "a", 0), Timeout: 7}}; !slices.Equal(got, want) {
		t.Errorf("stops %v, want %v", got, want)
	}
	for _, name := range []string{"a", "b"} {
		if st := h.containerState(crifake.ContainerID(pod, 0, name, 0)); st != runtimeapi.ContainerState_CONTAINER_EXITED {
			t.Errorf("old %s is %v", name, st)
		}
	}
	// A new sandbox, the next attempt, with new instances.
	if st := h.sandboxState(crifake.SandboxID(pod, 1)); st != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Fatalf("new sandbox is %v", st)
	}
	h.fake.Lock()
	attempt := h.fake.Sandboxes[crifake.SandboxID(pod, 1)].Metadata.Attempt
	h.fake.Unlock()
	if attempt != 1 {
		t.Errorf("new sandbox attempt %d", attempt)
	}
	for _, name := range []string{"a", "b"} {
		if st := h.containerState(crifake.ContainerID(pod, 1, name, 1)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Errorf("new %s is %v", name, st)
		}
	}
	st := h.statuses.last(t, pod.UID)
	if st.Phase != v1.PodRunning {
		t.Errorf("phase %s", st.Phase)
	}
	for _, cs := range st.ContainerStatuses {
		if cs.ContainerID != "cri://"+crifake.ContainerID(pod, 1, cs.Name, 1) || cs.State.Running == nil {
			t.Errorf("status of %s: %+v", cs.Name, cs)
		}
	}
	if ev := h.events.Reasons(pod.UID); !slices.Contains(ev, "SandboxChanged") || !slices.Contains(ev, "Killing") {
		t.Errorf("events %v", ev)
	}
	if n := h.calls("RunPodSandbox"); n != 2 {
		t.Errorf("RunPodSandbox called %d times", n)
	}
}

func TestSyncPodSandboxDiedTerminal(t *testing.T) {
	for _, tc := range []struct {
		name         string
		policy       v1.RestartPolicy
		exits        map[string]int32 // before the sandbox died; nil: no container was ever created
		wantTerminal bool
		wantPhase    v1.PodPhase
	}{
		{"Never, all succeeded", v1.RestartPolicyNever, map[string]int32{"a": 0, "b": 0}, true, v1.PodSucceeded},
		{"Never, one failed", v1.RestartPolicyNever, map[string]int32{"a": 0, "b": 137}, true, v1.PodFailed},
		{"Never, no container yet", v1.RestartPolicyNever, nil, false, v1.PodRunning},
		{"OnFailure, one failed", v1.RestartPolicyOnFailure, map[string]int32{"a": 0, "b": 1}, false, v1.PodRunning},
		{"OnFailure, all succeeded", v1.RestartPolicyOnFailure, map[string]int32{"a": 0, "b": 0}, true, v1.PodSucceeded},
		{"Always", v1.RestartPolicyAlways, map[string]int32{"a": 0, "b": 0}, false, v1.PodRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.MakePod("p", tc.policy, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
			if tc.exits == nil {
				// The sandbox came up; the containers' image was missing.
				h.images.InjectError("ImageStatus", errors.New("boom"))
				h.images.InjectError("ImageStatus", errors.New("boom"))
				if _, err := h.syncPod(pod); err == nil {
					t.Fatal("SyncPod did not fail")
				}
			} else {
				h.mustSync(pod)
				for name, code := range tc.exits {
					h.exit(crifake.ContainerID(pod, 0, name, 0), code)
				}
			}
			h.killSandbox(crifake.SandboxID(pod, 0))

			terminal, err := h.syncPod(pod)
			if err != nil || terminal != tc.wantTerminal {
				t.Fatalf("SyncPod = %v, %v; want %v, nil", terminal, err, tc.wantTerminal)
			}
			if st := h.statuses.last(t, pod.UID); st.Phase != tc.wantPhase {
				t.Errorf("phase %s, want %s", st.Phase, tc.wantPhase)
			}
			wantSandboxes := 2
			if tc.wantTerminal {
				wantSandboxes = 1
			}
			if n := h.calls("RunPodSandbox"); n != wantSandboxes {
				t.Errorf("RunPodSandbox called %d times, want %d", n, wantSandboxes)
			}
			if tc.policy == v1.RestartPolicyOnFailure && !tc.wantTerminal {
				// Only the failed container runs again.
				_, cs := h.podObjects(pod.UID)
				want := []string{crifake.ContainerID(pod, 0, "a", 0), crifake.ContainerID(pod, 0, "b", 0), crifake.ContainerID(pod, 1, "b", 1)}
				slices.Sort(want)
				if !slices.Equal(cs, want) {
					t.Errorf("containers %v, want %v", cs, want)
				}
			}
		})
	}
}

func TestSyncPodImages(t *testing.T) {
	pullErr := errors.New("registry down")
	for _, tc := range []struct {
		name      string
		pull      v1.PullPolicy
		present   bool
		inject    map[string]error // image service method -> error of its next call
		wantPulls int
		// wantErr and wantReason describe a failure; "" for a started container.
		wantErr    string
		wantReason string
		wantEvent  string
	}{
		{name: "IfNotPresent, present", pull: v1.PullIfNotPresent, present: true},
		{name: "IfNotPresent, missing", pull: v1.PullIfNotPresent, wantPulls: 1, wantEvent: "Pulling"},
		{name: "Always, present", pull: v1.PullAlways, present: true, wantPulls: 1, wantEvent: "Pulling"},
		{name: "Never, present", pull: v1.PullNever, present: true},
		{
			name: "Never, missing", pull: v1.PullNever,
			wantErr: "not present with pull policy of Never", wantReason: "ErrImageNeverPull", wantEvent: "ErrImageNeverPull",
		},
		{
			name: "pull fails", pull: v1.PullIfNotPresent, inject: map[string]error{"PullImage": pullErr},
			wantPulls: 1, wantErr: "registry down", wantReason: "ErrImagePull", wantEvent: "Failed",
		},
		{
			name: "image status fails", pull: v1.PullIfNotPresent, inject: map[string]error{"ImageStatus": errors.New("status broken")},
			wantErr: "status broken",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var present []string
			if tc.present {
				present = []string{"repo/app:1"}
			}
			h := newHarness(t, Options{}, present...)
			for m, err := range tc.inject {
				h.images.InjectError(m, err)
			}
			pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "c", Image: "repo/app:1", Pull: tc.pull})
			terminal, err := h.syncPod(pod)
			if terminal {
				t.Fatal("terminal")
			}
			if n := h.imageCalls("PullImage"); n != tc.wantPulls {
				t.Errorf("PullImage called %d times, want %d", n, tc.wantPulls)
			}
			if tc.wantEvent != "" && !slices.Contains(h.events.Reasons(pod.UID), tc.wantEvent) {
				t.Errorf("events %v, want %s", h.events.Reasons(pod.UID), tc.wantEvent)
			}
			if tc.wantPulls == 0 && slices.Contains(h.events.Reasons(pod.UID), "Pulling") {
				t.Errorf("events %v: Pulling without a pull", h.events.Reasons(pod.UID))
			}
			st := h.statuses.last(t, pod.UID)
			cs := st.ContainerStatuses[0]
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("SyncPod: %v", err)
				}
				if cs.State.Running == nil {
					t.Errorf("state %+v", cs.State)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("SyncPod error %v, want %q", err, tc.wantErr)
			}
			if n := h.calls("CreateContainer"); n != 0 {
				t.Errorf("CreateContainer called %d times without an image", n)
			}
			if tc.wantReason != "" {
				if cs.State.Waiting == nil || cs.State.Waiting.Reason != tc.wantReason || cs.State.Waiting.Message == "" {
					t.Errorf("state %+v, want waiting %s", cs.State, tc.wantReason)
				}
				if tc.wantReason == "ErrImagePull" && !strings.Contains(cs.State.Waiting.Message, "registry down") {
					t.Errorf("message %q", cs.State.Waiting.Message)
				}
			}
			if st.Phase != v1.PodPending {
				t.Errorf("phase %s, want Pending", st.Phase)
			}
			if tc.pull == v1.PullNever {
				return
			}
			// The failure was transient: the retry, past any pull
			// back-off, starts the container.
			h.clock.Step(10 * time.Second)
			h.mustSync(pod)
			if cs := h.statuses.last(t, pod.UID).ContainerStatuses[0]; cs.State.Running == nil {
				t.Errorf("after the retry: %+v", cs.State)
			}
		})
	}
}

func TestSyncPodRuntimeErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		method     string
		wantReason string // waiting reason of the first container; "" if no status
		wantEvent  string
		// wantCreates is the CreateContainer calls after the retry.
		wantCreates int
	}{
		{name: "list sandboxes", method: "ListPodSandbox", wantCreates: 2},
		{name: "list containers", method: "ListContainers", wantCreates: 2},
		{name: "run sandbox", method: "RunPodSandbox", wantEvent: "FailedCreatePodSandBox", wantCreates: 2},
		{name: "create container", method: "CreateContainer", wantReason: "CreateContainerError", wantEvent: "Failed", wantCreates: 3},
		{name: "start container", method: "StartContainer", wantReason: "RunContainerError", wantEvent: "Failed", wantCreates: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
			h.fake.InjectError(tc.method, errors.New("injected"))
			terminal, err := h.syncPod(pod)
			if terminal || err == nil || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("SyncPod = %v, %v; want the injected error", terminal, err)
			}
			if tc.wantEvent != "" && !slices.Contains(h.events.Reasons(pod.UID), tc.wantEvent) {
				t.Errorf("events %v, want %s", h.events.Reasons(pod.UID), tc.wantEvent)
			}
			if tc.wantReason != "" {
				st := h.statuses.last(t, pod.UID)
				a, b := st.ContainerStatuses[0], st.ContainerStatuses[1]
				if a.State.Waiting == nil || a.State.Waiting.Reason != tc.wantReason || !strings.Contains(a.State.Waiting.Message, "injected") {
					t.Errorf("status of a: %+v, want waiting %s", a.State, tc.wantReason)
				}
				// One failing container does not hold up the others.
				if b.State.Running == nil {
					t.Errorf("status of b: %+v", b.State)
				}
				if st.Phase != v1.PodPending {
					t.Errorf("phase %s", st.Phase)
				}
			}
			h.mustSync(pod)
			if n := h.calls("CreateContainer"); n != tc.wantCreates {
				t.Errorf("CreateContainer called %d times, want %d", n, tc.wantCreates)
			}
			wantSandboxes := 1
			if tc.method == "RunPodSandbox" {
				wantSandboxes = 2
			}
			if n := h.calls("RunPodSandbox"); n != wantSandboxes {
				t.Errorf("RunPodSandbox called %d times, want %d", n, wantSandboxes)
			}
			st := h.statuses.last(t, pod.UID)
			for _, cs := range st.ContainerStatuses {
				if cs.State.Running == nil {
					t.Errorf("after the retry %s is %+v", cs.Name, cs.State)
				}
			}
			if st.Phase != v1.PodRunning {
				t.Errorf("phase after the retry %s", st.Phase)
			}
		})
	}
}

// A pod runs in one sandbox at a time: while the old sandbox's containers
// cannot be stopped, no new sandbox is created.
func TestSyncPodSandboxDiedOldContainerNotStopped(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	h.mustSync(pod)
	h.killSandbox(crifake.SandboxID(pod, 0))
	h.fake.InjectError("StopContainer", errors.New("injected"))
	if terminal, err := h.syncPod(pod); terminal || err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("SyncPod = %v, %v; want the stop error", terminal, err)
	}
	if n := h.calls("RunPodSandbox"); n != 1 {
		t.Fatalf("a new sandbox was created while the old one's container runs")
	}
	if !slices.Contains(h.events.Reasons(pod.UID), "FailedCreatePodSandBox") {
		t.Errorf("events %v", h.events.Reasons(pod.UID))
	}
	h.mustSync(pod)
	if st := h.containerState(crifake.ContainerID(pod, 1, "a", 1)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("new container is %v", st)
	}
}

func TestSyncPodLogDirectoryUnusable(t *testing.T) {
	file := t.TempDir() + "/file"
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{LogRoot: file}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	if _, err := h.syncPod(pod); err == nil || !strings.Contains(err.Error(), "log directory") {
		t.Fatalf("SyncPod = %v, want a log directory error", err)
	}
	if n := h.calls("RunPodSandbox"); n != 0 {
		t.Errorf("RunPodSandbox called %d times", n)
	}
}

// Without the sandbox's status the pod has no IP, and runs all the same.
func TestSyncPodSandboxStatusError(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	h.fake.InjectError("PodSandboxStatus", errors.New("injected"))
	h.mustSync(pod)
	if st := h.statuses.last(t, pod.UID); st.PodIP != "" || st.PodIPs != nil || st.Phase != v1.PodRunning {
		t.Errorf("status %s %q %v", st.Phase, st.PodIP, st.PodIPs)
	}
	h.mustSync(pod)
	if st := h.statuses.last(t, pod.UID); st.PodIP != fakecri.FakePodSandboxIPs[0] {
		t.Errorf("IP %q after the retry", st.PodIP)
	}
}

// readPod's errors fail SyncPod before anything is created, and so do the
// errors of the read after the containers were started, for the status.
func TestSyncPodReadErrors(t *testing.T) {
	for _, tc := range []struct {
		method string
		skip   int // calls of method that succeed first
	}{
		{"ContainerStatus", 0},
		{"ListPodSandbox", 1}, // the read for the status, after the new sandbox
		{"ListContainers", 1},
	} {
		h := newHarness(t, Options{}, "img")
		pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
		if tc.method == "ContainerStatus" {
			h.mustSync(pod)
		}
		errs := make([]error, tc.skip, tc.skip+1)
		h.fake.Lock()
		h.fake.Errors[tc.method] = append(errs, errors.New("injected"))
		h.fake.Unlock()
		written := h.statuses.count(pod.UID)
		if terminal, err := h.syncPod(pod); terminal || err == nil || !strings.Contains(err.Error(), "injected") {
			t.Errorf("%s #%d: SyncPod = %v, %v; want the injected error", tc.method, tc.skip, terminal, err)
		}
		if n := h.statuses.count(pod.UID); n != written {
			t.Errorf("%s #%d: a status was written from a failed read", tc.method, tc.skip)
		}
		h.mustSync(pod)
	}
}

// A sync plans from one view of the runtime: one that changes nothing
// reads it once, and one that acts reads it once more, for the status.
func TestSyncPodReadsTheRuntimeOnce(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
	for _, want := range []struct {
		what  string
		reads int
	}{{"the first sync", 2}, {"a sync with nothing to do", 1}} {
		sandboxes, containers := h.calls("ListPodSandbox"), h.calls("ListContainers")
		h.mustSync(pod)
		if n, m := h.calls("ListPodSandbox")-sandboxes, h.calls("ListContainers")-containers; n != want.reads || m != want.reads {
			t.Errorf("%s listed sandboxes %d times and containers %d times, want %d", want.what, n, m, want.reads)
		}
	}
	if st := h.statuses.last(t, pod.UID); st.Phase != v1.PodRunning {
		t.Errorf("phase %s", st.Phase)
	}
}
