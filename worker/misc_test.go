package worker

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/fsm"
)

// TestPreTerminatedNeedsBothSides: only a pod terminal in the API *and*
// with nothing running in the runtime cache skips to SyncTerminatedPod; a
// running container or a ready sandbox means it must be terminated first.
func TestPreTerminatedNeedsBothSides(t *testing.T) {
	exitedSandboxReady := exitedStatus("a")
	exitedSandboxReady.SandboxStatuses[0].State = runtimeapi.PodSandboxState_SANDBOX_READY
	runningNoSandbox := &PodStatus{ID: "a", ContainerStatuses: []*runtimeapi.ContainerStatus{{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}}
	for _, c := range []struct {
		name   string
		phase  v1.PodPhase
		status *PodStatus
		want   []string
	}{
		{"terminal on both sides", v1.PodSucceeded, exitedStatus("a"), []string{"SyncTerminatedPod"}},
		{"nothing in the runtime at all", v1.PodFailed, &PodStatus{ID: "a"}, []string{"SyncTerminatedPod"}},
		{"sandbox still ready", v1.PodSucceeded, exitedSandboxReady, []string{"SyncTerminatingPod", "SyncTerminatedPod"}},
		{"container still running", v1.PodFailed, runningNoSandbox, []string{"SyncTerminatingPod", "SyncTerminatedPod"}},
		{"runtime terminal, API running", v1.PodRunning, exitedStatus("a"), []string{"SyncPod"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := newFakeCache()
			cache.set("a", c.status)
			e := start(t, Options{StatusCache: cache})
			e.update(createOp(inPhase(newPod("a", "web", false), c.phase)))
			e.wantFns("a", c.want...)
		})
	}
	// A known pod that becomes terminal is terminated normally, whatever
	// the cache says.
	cache := newFakeCache()
	e := start(t, Options{StatusCache: cache})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	cache.set("a", exitedStatus("a"))
	e.update(updateOp(inPhase(pod, v1.PodSucceeded)))
	e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
}

// TestStaleTimerIgnored: a timer firing for a UID without a record (or for
// a pod with work already queued) changes nothing.
func TestStaleTimerIgnored(t *testing.T) {
	log := newRowLog()
	e := start(t, Options{Observer: log})
	e.locked(func(c *Core) { c.Timer("nobody") })
	if got := log.fired(); len(got) != 0 {
		t.Fatalf("a timer for an unknown UID fired %v", got)
	}
	e.wantState("nobody", fsm.Absent)
}

// TestMetricsWithObserver: with both a Registerer and an Observer, both see
// every transition.
func TestMetricsWithObserver(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	log := newRowLog()
	e := start(t, Options{Registerer: reg, Observer: log})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	e.update(killOp(pod, nil))
	log.mu.Lock()
	total := 0
	for _, n := range log.rows {
		total += n
	}
	log.mu.Unlock()
	counted := testutil.CollectAndCount(reg, "podlife_transitions_total")
	if total == 0 || counted == 0 {
		t.Fatalf("observer saw %d transitions, %d transition series", total, counted)
	}
	if got := testutil.ToFloat64(e.w.core.metrics.transitions.WithLabelValues("Running", "Kill", "TerminationRequested")); got != 1 {
		t.Fatalf("Running -Kill-> TerminationRequested counted %v times, want 1", got)
	}
	if got := testutil.ToFloat64(e.w.core.metrics.rejections.WithLabelValues("Running", "Dequeue")); got != 0 {
		t.Fatalf("rejections: %v", got)
	}
}

// TestWorkingPodsByConfig: the working_pods gauge sorts records into
// desired, orphan and runtime-only.
func TestWorkingPodsByConfig(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	e := start(t, Options{Registerer: reg})
	desired, orphan := newPod("d", "web", false), newPod("o", "db", true)
	e.update(createOp(desired))
	e.update(createOp(orphan))
	g := e.hold("o", "SyncTerminatingPod", outcome{})
	gr := e.hold("r", "SyncTerminatingRuntimePod", outcome{})
	e.send(runtimeKillOp("r", "ghost", nil))
	gr.wait()
	e.w.SyncKnownPods([]*v1.Pod{desired})
	g.wait()
	gauge := func(lifecycle, config, static string) float64 {
		return testutil.ToFloat64(e.w.core.metrics.workingPods.WithLabelValues(lifecycle, config, static))
	}
	if gauge("sync", "desired", "") != 1 || gauge("terminating", "orphan", "true") != 1 || gauge("terminating", "runtime_only", "unknown") != 1 {
		t.Fatalf("working pods: desired %v, orphan %v, runtime-only %v", gauge("sync", "desired", ""),
			gauge("terminating", "orphan", "true"), gauge("terminating", "runtime_only", "unknown"))
	}
	g.release()
	gr.release()
	e.settle()
}

// TestDefaults: the zero Options work, with the real clock and the
// kubelet's intervals.
func TestDefaults(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	syncer := newFakeSyncer()
	w := New(syncer, Options{})
	defer func() {
		w.Stop()
		goleak.VerifyNone(t, ignore)
	}()
	if w.core.resync != time.Minute || w.core.backoff != 10*time.Second {
		t.Fatalf("resync %v, back-off %v; want 1m and 10s", w.core.resync, w.core.backoff)
	}
	if err := w.UpdatePod(createOp(newPod("a", "web", false))); err != nil {
		t.Fatal(err)
	}
	w.waitIdle()
	if got := syncer.fns("a"); len(got) != 1 || got[0] != "SyncPod" {
		t.Fatalf("calls %v", got)
	}
}

// TestSyncKnownPodsAfterStop: after Stop, SyncKnownPods still answers but
// no sync function runs any more.
func TestSyncKnownPodsAfterStop(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	e.w.Stop()
	if got := e.w.SyncKnownPods(nil); got["a"].State != TerminatingPod {
		t.Fatalf("SyncKnownPods after Stop: %+v", got)
	}
	e.settle()
	e.wantFns("a", "SyncPod")
}

// TestStrings: the string forms of the public enums.
func TestStrings(t *testing.T) {
	for ty, want := range map[UpdateType]string{SyncPodSync: "sync", SyncPodUpdate: "update", SyncPodCreate: "create", SyncPodKill: "kill", 4: "unknown", -1: "unknown"} {
		if got := ty.String(); got != want {
			t.Errorf("UpdateType(%d) = %q, want %q", int(ty), got, want)
		}
	}
	for s, want := range map[PodWorkerState]string{SyncPod: "sync", TerminatingPod: "terminating", TerminatedPod: "terminated"} {
		if got := s.String(); got != want {
			t.Errorf("PodWorkerState(%d) = %q, want %q", int(s), got, want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("PodWorkerState(3).String() did not panic")
		}
	}()
	_ = PodWorkerState(3).String()
}
