package kuberuntime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"

	"github.com/podlife/podlife/cri/lifecycle"
	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/internal/crifake"
)

// probeHarness is the harness with a prober on its fake clock, whose exec
// probes succeed while healthy is set; it records the prober's updates.
type probeHarness struct {
	*harness
	m       *prober.Manager
	healthy atomic.Bool
	execs   atomic.Int32
	mu      sync.Mutex
	updates []prober.Update
}

func newProbeHarness(t *testing.T) *probeHarness {
	h := &probeHarness{harness: newHarness(t, Options{}, "img")}
	h.healthy.Store(true)
	h.rt.OnExec = func(_ context.Context, _ string, cmd []string) error {
		h.execs.Add(1)
		if h.healthy.Load() {
			return nil
		}
		return utilexec.CodeExitError{Err: errors.New("exit status 1"), Code: 1}
	}
	h.m = prober.NewManager(prober.Config{Runner: lifecycle.NewProbeRunner(h.rt), Clock: h.clock, Events: h.events, OnChange: func(u prober.Update) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.updates = append(h.updates, u)
	}})
	t.Cleanup(h.m.Stop)
	h.s.opts.Probes = h.m
	return h
}

// probe steps the fake clock by d and waits until the exec probes ran n
// times in all and the probes' timers are set again (timers of them).
func (h *probeHarness) probe(d time.Duration, n int32, timers int) {
	h.t.Helper()
	h.clock.Step(d)
	deadline := time.Now().Add(10 * time.Second)
	for h.execs.Load() != n || h.clock.Waiters() != timers {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %d probe runs (%d) and %d timers (%d)", n, h.execs.Load(), timers, h.clock.Waiters())
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *probeHarness) result(k prober.Kind, id string) prober.Result {
	r, _ := h.m.Results().Get(k, id)
	return r
}

func execCheck(failureThreshold int32) *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds: 1, FailureThreshold: failureThreshold}
}

// A failed liveness probe kills the container in the next SyncPod, which
// restarts it as the restart policy says, with its restart count.
func TestLivenessFailureRestarts(t *testing.T) {
	for _, tc := range []struct {
		policy      v1.RestartPolicy
		probeGrace  *int64
		wantRestart bool
		wantStop    int64
	}{
		{v1.RestartPolicyAlways, nil, true, 30},
		{v1.RestartPolicyOnFailure, new(int64(7)), true, 7},
		{v1.RestartPolicyNever, nil, false, 30},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			h := newProbeHarness(t)
			pod := crifake.MakePod("web", tc.policy, crifake.Ctr{Name: "app"})
			pod.Spec.Containers[0].LivenessProbe = execCheck(2)
			pod.Spec.Containers[0].LivenessProbe.TerminationGracePeriodSeconds = tc.probeGrace
			h.mustSync(pod)
			first := crifake.ContainerID(pod, 0, "app", 0)
			h.probe(0, 1, 1)
			h.healthy.Store(false)
			h.probe(time.Second, 2, 1)
			h.mustSync(pod) // one failure of two: nothing happens
			if st := h.containerState(first); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
				t.Fatalf("container %v after one failure of two", st)
			}
			h.probe(time.Second, 3, 0)
			if r := h.result(prober.Liveness, first); r != prober.Failure {
				t.Fatalf("liveness result %v, want Failure", r)
			}

			// Termination requested (ctx cancelled): nothing is killed.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, _ = h.s.SyncPod(ctx, 0, pod, nil, nil)
			if st := h.containerState(first); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
				t.Fatalf("a cancelled SyncPod killed the unhealthy container (%v)", st)
			}

			h.mustSync(pod)
			if st := h.containerState(first); st != runtimeapi.ContainerState_CONTAINER_EXITED {
				t.Fatalf("unhealthy container %v after SyncPod, want exited", st)
			}
			if stops := h.rt.StopCalls(); len(stops) != 1 || stops[0].ID != first || stops[0].Timeout != tc.wantStop {
				t.Errorf("stops %+v, want %s stopped with grace %d", stops, first, tc.wantStop)
			}
			wantKill := "Container app failed liveness probe"
			if tc.wantRestart {
				wantKill += ", will be restarted"
			}
			if got := h.events.Messages(pod.UID, "Killing"); !slices.Equal(got, []string{wantKill}) {
				t.Errorf("Killing events %q, want %q", got, wantKill)
			}
			if got := h.events.Messages(pod.UID, "Unhealthy"); len(got) != 2 || !strings.HasPrefix(got[0], "Liveness probe failed: ") {
				t.Errorf("Unhealthy events %q, want 2 liveness failures", got)
			}
			cs := h.statuses.last(t, pod.UID).ContainerStatuses[0]
			if !tc.wantRestart {
				if cs.State.Terminated == nil || h.calls("CreateContainer") != 1 {
					t.Fatalf("Never: status %+v after %d creations; want terminated, not created again", cs.State, h.calls("CreateContainer"))
				}
				return
			}
			if cs.RestartCount != 1 || cs.State.Running == nil || cs.ContainerID != "cri://"+crifake.ContainerID(pod, 0, "app", 1) {
				t.Fatalf("status after the restart: restartCount %d, state %+v, id %s", cs.RestartCount, cs.State, cs.ContainerID)
			}
			if _, ok := h.m.Results().Get(prober.Liveness, first); ok {
				t.Error("the killed container's result is still held")
			}
			h.healthy.Store(true)
			h.probe(0, 4, 1) // the new instance is probed
		})
	}
}

// The readiness result decides the container's ready and the pod's Ready
// and ContainersReady conditions in the generated status.
func TestReadinessInStatus(t *testing.T) {
	h := newProbeHarness(t)
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}, crifake.Ctr{Name: "plain"})
	pod.Spec.Containers[0].ReadinessProbe = execCheck(1)
	h.mustSync(pod)
	ready := func(want bool) {
		t.Helper()
		h.mustSync(pod)
		st := h.statuses.last(t, pod.UID)
		if got := st.ContainerStatuses[0].Ready; got != want {
			t.Errorf("container ready = %v, want %v", got, want)
		}
		if !st.ContainerStatuses[1].Ready {
			t.Error("the container without a readiness probe is not ready")
		}
		wantStatus := v1.ConditionFalse
		if want {
			wantStatus = v1.ConditionTrue
		}
		for _, c := range st.Conditions {
			if (c.Type == v1.PodReady || c.Type == v1.ContainersReady) && c.Status != wantStatus {
				t.Errorf("condition %s = %s, want ready %v", c.Type, c.Status, want)
			}
		}
	}
	ready(false) // not probed yet
	h.probe(0, 1, 1)
	ready(true)
	h.healthy.Store(false)
	h.probe(time.Second, 2, 1)
	ready(false)
}

// A container's probes go with it: an exit seen by a sync drops them; a
// terminating pod's liveness failure kills nothing of its own, the
// termination stops the container, and the pod's probes are dropped.
func TestProbesFollowTheSyncs(t *testing.T) {
	h := newProbeHarness(t)
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	pod.Spec.Containers[0].LivenessProbe = execCheck(1)
	pod.Spec.Containers[0].ReadinessProbe = execCheck(1)
	h.mustSync(pod)
	h.probe(0, 2, 2)
	h.exit(crifake.ContainerID(pod, 0, "app", 0), 1)
	_, _ = h.syncPod(pod) // restarts it, probes the new instance
	h.probe(0, 4, 2)
	if n := h.calls("CreateContainer"); n != 2 {
		t.Fatalf("%d creations, want 2", n)
	}

	h.healthy.Store(false)
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := h.clock.Waiters(); n != 0 {
		t.Errorf("%d probe timers after the pod terminated, want none", n)
	}
	h.clock.Step(time.Hour)
	if got := h.events.Messages(pod.UID, "Killing"); len(got) != 1 || strings.Contains(got[0], "probe") {
		t.Errorf("Killing events %q: want the termination's only", got)
	}
}

// A sidecar whose liveness probe failed is killed and restarted, whatever
// the pod's restart policy.
func TestSidecarLivenessFailureRestarts(t *testing.T) {
	h := newProbeHarness(t)
	pod := crifake.MakePod("web", v1.RestartPolicyNever, crifake.Ctr{Name: "app"})
	always := v1.ContainerRestartPolicyAlways
	pod.Spec.InitContainers = []v1.Container{{Name: "side", Image: "img", RestartPolicy: &always, LivenessProbe: execCheck(1)}}
	h.mustSync(pod)
	h.mustSync(pod) // the sidecar runs: the app starts
	first := crifake.ContainerID(pod, 0, "side", 0)
	h.probe(0, 1, 1)
	h.healthy.Store(false)
	h.probe(time.Second, 2, 0)
	h.mustSync(pod)
	if st := h.containerState(first); st != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Fatalf("unhealthy sidecar %v after SyncPod, want exited", st)
	}
	if st := h.containerState(crifake.ContainerID(pod, 0, "side", 1)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("the sidecar's next instance %v, want running", st)
	}
	if got := h.events.Messages(pod.UID, "Killing"); !slices.Equal(got, []string{"Container side failed liveness probe, will be restarted"}) {
		t.Errorf("Killing events %q", got)
	}
	if st := h.containerState(crifake.ContainerID(pod, 0, "app", 0)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("the app %v, want still running", st)
	}
}

// A sidecar with a startup probe has its turn only once the probe
// succeeded: the next container waits for it (the kubelet's
// computeInitContainerActions), and its readiness probe runs at once after
// the startup probe's success, whatever its period.
func TestSidecarStartupProbeHoldsTheNextContainer(t *testing.T) {
	h := newProbeHarness(t)
	h.healthy.Store(false)
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	always := v1.ContainerRestartPolicyAlways
	ready := execCheck(1)
	ready.PeriodSeconds = 30
	pod.Spec.InitContainers = []v1.Container{{Name: "side", Image: "img", RestartPolicy: &always,
		StartupProbe: execCheck(120), ReadinessProbe: ready}}
	h.mustSync(pod)
	side := crifake.ContainerID(pod, 0, "side", 0)
	h.probe(0, 1, 1) // startup fails
	h.mustSync(pod)
	if got := h.instances(pod)["app"]; got != "" {
		t.Fatalf("the app was created (%s) before the sidecar's startup probe succeeded", got)
	}
	st := h.statuses.last(t, pod.UID)
	if cs := st.InitContainerStatuses[0]; cs.Started == nil || *cs.Started || cs.Ready {
		t.Fatalf("sidecar status before its startup probe succeeded: %+v", cs)
	}
	h.healthy.Store(true)
	h.probe(time.Second, 2, 1) // startup succeeds; readiness is due at once
	h.probe(0, 3, 1)           // and runs, due again in 30 s
	if r := h.result(prober.Readiness, side); r != prober.Success {
		t.Fatalf("readiness %v right after the startup probe succeeded, want Success", r)
	}
	h.mustSync(pod)
	if st := h.containerState(crifake.ContainerID(pod, 0, "app", 0)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("the app %v after the sidecar started, want running", st)
	}
	st = h.statuses.last(t, pod.UID)
	if cs := st.InitContainerStatuses[0]; !*cs.Started || !cs.Ready {
		t.Errorf("sidecar status after its startup probe succeeded: started %v, ready %v", *cs.Started, cs.Ready)
	}
}
