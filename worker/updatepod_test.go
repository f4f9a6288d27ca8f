package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/fsm"
)

// histogram returns the sample count and sum of the pod_worker_duration
// series for one operation type.
func histogram(t *testing.T, reg *prometheus.Registry, op string) (count uint64, sum float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "kubelet_pod_worker_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation_type" && l.GetValue() == op {
					return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return 0, 0
}

// TestCoalescingLatestUpdateWins: updates that arrive while SyncPod runs
// are coalesced; the worker then runs once with the latest one, and the
// latency it reports starts at the oldest coalesced update.
func TestCoalescingLatestUpdateWins(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := start(t, Options{Registerer: reg})
	pod := newPod("a", "web", false)
	e.update(createOp(withVersion(pod, "1")))
	g := e.hold("a", "SyncPod", outcome{})
	e.send(updateOp(withVersion(pod, "2")))
	g.wait()
	now := e.clock.Now()
	for i, u := range []struct {
		op  func(*v1.Pod) UpdatePodOptions
		rv  string
		ago time.Duration
	}{
		{updateOp, "3", 10 * time.Second},
		{syncOp, "4", 5 * time.Second},
		{createOp, "5", 0}, // no StartTime: the oldest one is kept
		{updateOp, "6", 2 * time.Second},
	} {
		o := u.op(withVersion(pod, u.rv))
		if u.ago > 0 {
			o.StartTime = now.Add(-u.ago)
		}
		e.send(o)
		if i == 0 {
			if n, _ := histogram(t, reg, "update"); n != 0 {
				t.Fatalf("%d latencies observed before any update was processed", n)
			}
		}
	}
	g.release()
	e.settle()
	calls := e.syncer.calls("a")
	if len(calls) != 3 {
		t.Fatalf("calls %+v, want 3 SyncPods", calls)
	}
	if last := calls[2]; last.version != "6" || last.updateType != SyncPodUpdate {
		t.Fatalf("coalesced call got version %q type %s, want the latest update (6, update)", last.version, last.updateType)
	}
	if n, sum := histogram(t, reg, "update"); n != 1 || sum != 10 {
		t.Fatalf("update latency: %d samples summing %vs, want one of 10s (the oldest coalesced StartTime)", n, sum)
	}
}

// TestCreateCoalescedIntoKill: a create not yet taken by the worker is
// replaced by a kill; the pod is terminated without ever running SyncPod.
func TestCreateCoalescedIntoKill(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	kpo, done := notify(int64p(4))
	e.locked(func(c *Core) {
		e.coreUpdate(c, createOp(pod))
		e.coreUpdate(c, killOp(pod, kpo))
		if s, _ := c.State("a"); s != fsm.TerminationRequested {
			t.Errorf("after the kill: %s, want TerminationRequested", s)
		}
	})
	e.settle()
	wantClosed(t, done, "kill")
	e.wantState("a", fsm.Finished)
	e.wantFns("a", "SyncTerminatingPod", "SyncTerminatedPod")
	e.wantGraces("a", 4)
}

// TestKillNeverLost: a kill while SyncPod runs cancels its context; the
// termination runs next, with no back-off and no outside event.
func TestKillNeverLost(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	g := e.hold("a", "SyncPod", outcome{}) // never released
	e.send(createOp(pod))
	g.wait()
	kpo, done := notify(nil)
	e.send(killOp(pod, kpo))
	if !e.w.IsPodTerminationRequested("a") {
		t.Fatal("the kill is not latched at once")
	}
	e.settle()
	wantClosed(t, done, "kill")
	e.wantState("a", fsm.Finished)
	e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
	if c := e.syncer.calls("a")[0]; !errors.Is(c.err, context.Canceled) || !c.ctxDone {
		t.Fatalf("SyncPod returned %v (ctx done %v), want its context cancelled", c.err, c.ctxDone)
	}
	if c := e.syncer.calls("a")[1]; c.ctxDone {
		t.Fatal("SyncTerminatingPod got the cancelled context")
	}
}

// TestKillsDuringTerminationAreKept: kills that arrive while the pod
// terminates register their channels and status functions; all channels
// close when the terminating sync succeeds and the latest status function
// is the one used.
func TestKillsDuringTerminationAreKept(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	e.syncer.script("a", "SyncTerminatingPod", outcome{err: errSync})
	first, firstDone := notify(nil)
	first.PodStatusFunc = statusReason("Preempted")
	e.update(killOp(pod, first))
	e.wantState("a", fsm.Terminating)
	wantOpen(t, firstDone, "first kill after a failed terminating sync")
	second, secondDone := notify(nil)
	second.PodStatusFunc, second.Evict = statusReason("Evicted"), true
	e.send(killOp(pod, second)) // queued: the retry runs at once, before the back-off
	e.settle()
	wantClosed(t, firstDone, "first kill")
	wantClosed(t, secondDone, "second kill")
	calls := e.syncer.calls("a")
	if len(calls) != 4 || calls[1].reason != "Preempted" || calls[2].reason != "Evicted" {
		t.Fatalf("calls %+v, want the status function of each kill in turn", calls)
	}
	// The first kill was not an eviction and the second came while
	// terminating: evicted is decided when termination is requested.
	if e.w.ShouldPodContentBeRemoved("a") {
		t.Fatal("content removal: the pod was neither evicted nor deleted when termination was requested")
	}
}

// TestTerminalPhase: an update with phase Succeeded terminates a running
// pod with the grace period from its spec.
func TestTerminalPhase(t *testing.T) {
	for _, phase := range []v1.PodPhase{v1.PodSucceeded, v1.PodFailed} {
		t.Run(string(phase), func(t *testing.T) {
			e := start(t, Options{})
			pod := newPod("a", "web", false)
			e.update(createOp(pod))
			e.update(updateOp(inPhase(pod, phase)))
			e.wantState("a", fsm.Finished)
			e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
			e.wantGraces("a", 30)
			if e.w.ShouldPodContentBeRemoved("a") {
				t.Fatal("a terminal pod that was not deleted keeps its content")
			}
		})
	}
}

// TestSyncPodReportsTerminal: SyncPod returning isTerminal moves the pod to
// termination by itself; the terminating sync gets no grace override.
func TestSyncPodReportsTerminal(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.syncer.script("a", "SyncPod", outcome{}, outcome{terminal: true})
	e.update(createOp(pod))
	e.wantState("a", fsm.Running)
	e.update(syncOp(pod))
	e.wantState("a", fsm.Finished)
	e.wantFns("a", "SyncPod", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
	e.wantGraces("a", -1)
	if !e.w.IsPodKnownTerminated("a") || e.w.ShouldPodContentBeRemoved("a") {
		t.Fatal("a pod that completed by itself is terminated and keeps its content")
	}
}

// TestEviction: an evicting kill makes the content removable at once, while
// containers still run.
func TestEviction(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	g := e.hold("a", "SyncTerminatingPod", outcome{})
	e.send(killOp(pod, &KillPodOptions{Evict: true, PodTerminationGracePeriodSecondsOverride: int64p(5)}))
	g.wait()
	if !e.w.ShouldPodContentBeRemoved("a") || !e.w.CouldHaveRunningContainers("a") {
		t.Fatal("evicted pod: content removable while containers may still run")
	}
	if e.w.ShouldPodRuntimeBeRemoved("a") {
		t.Fatal("runtime removable before the pod terminated")
	}
	g.release()
	e.settle()
	e.wantState("a", fsm.Finished)
	e.wantGraces("a", 5)
	if !e.w.ShouldPodContentBeRemoved("a") {
		t.Fatal("evicted pod: content removable after it finished")
	}
}

// TestDeletionTimestamp: a deletion timestamp terminates the pod with the
// apiserver's deletion grace period (never below 1 s); the content becomes
// removable only once the pod terminated.
func TestDeletionTimestamp(t *testing.T) {
	for _, c := range []struct {
		name        string
		deleteGrace int64
		want        int64
	}{
		{"graceful", 7, 7},
		{"longer than the spec", 45, 45},
		{"force", 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Options{})
			pod := newPod("a", "web", false)
			e.update(createOp(pod))
			g := e.hold("a", "SyncTerminatingPod", outcome{})
			e.send(updateOp(deleting(pod, c.deleteGrace)))
			g.wait()
			if e.w.ShouldPodContentBeRemoved("a") {
				t.Fatal("deleted pod: content removable while it terminates")
			}
			g.release()
			e.settle()
			e.wantState("a", fsm.Finished)
			e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
			e.wantGraces("a", c.want)
			if !e.w.ShouldPodContentBeRemoved("a") {
				t.Fatal("deleted pod: content removable once terminated")
			}
		})
	}
}

// TestKillOptionsOutsideTermination: kill options on an update that does
// not terminate the pod mean nothing; their channel is closed at once.
func TestKillOptionsOutsideTermination(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	kpo, done := notify(int64p(1))
	e.send(UpdatePodOptions{UpdateType: SyncPodUpdate, Pod: pod, KillPodOptions: kpo})
	wantClosed(t, done, "kill options of a plain update")
	e.settle()
	e.wantState("a", fsm.Running)
	e.wantFns("a", "SyncPod", "SyncPod")
}

// TestKillAfterFinished: a kill of a finished pod is ignored and its channel
// is closed at once (the kubelet leaves it open).
func TestKillAfterFinished(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(killOp(pod, nil))
	e.wantState("a", fsm.Finished)
	kpo, done := notify(nil)
	e.send(killOp(pod, kpo))
	wantClosed(t, done, "kill of a finished pod")
	e.settle()
	e.wantFns("a", "SyncTerminatingPod", "SyncTerminatedPod")
}

// TestMirrorPodRemembered: an update without a mirror pod keeps the last
// one known.
func TestMirrorPodRemembered(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("s", "etcd", true)
	mirror := newPod("m", "etcd", false)
	e.update(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod, MirrorPod: mirror})
	e.update(updateOp(pod))
	for i, c := range e.syncer.calls("s") {
		if c.mirror != "etcd" {
			t.Fatalf("call %d got mirror pod %q, want etcd", i, c.mirror)
		}
	}
}

// TestBothPodAndRunningPod: with both set, the pod wins and the update is
// an ordinary one.
func TestBothPodAndRunningPod(t *testing.T) {
	e := start(t, Options{})
	e.update(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: newPod("a", "web", false), RunningPod: runningPod("a", "web")})
	e.wantState("a", fsm.Running)
	e.wantFns("a", "SyncPod")
}
