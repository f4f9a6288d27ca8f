package worker

import (
	"maps"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
)

// TestOrphanNeverStartedIsRemoved: an orphan that never started and was
// never seen in the runtime is removed without any sync call.
func TestOrphanNeverStartedIsRemoved(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.locked(func(c *Core) { // the worker has not taken the create yet
		e.coreUpdate(c, createOp(pod))
		if got := c.SyncKnownPods(nil); len(got) != 0 {
			t.Errorf("SyncKnownPods kept %+v", got)
		}
	})
	e.settle()
	e.wantState("a", fsm.Absent)
	e.wantFns("a")
	// The UID may come back as a new pod.
	e.update(createOp(pod))
	e.wantState("a", fsm.Running)
	e.wantFns("a", "SyncPod")
}

// TestOrphanStartedIsTerminated: an orphan that started is driven to
// termination with the grace period of its last spec, without any update
// from outside.
func TestOrphanStartedIsTerminated(t *testing.T) {
	for _, c := range []struct {
		name string
		pod  *v1.Pod
		want int64
	}{
		{"spec grace", newPod("a", "web", false), 30},
		{"spec grace of the last pod", withSpecGrace(newPod("a", "web", false), int64p(12)), 12},
		{"no spec grace", withSpecGrace(newPod("a", "web", false), nil), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Options{})
			e.update(createOp(c.pod))
			got := e.w.SyncKnownPods(nil)
			if got["a"] != (PodWorkerSync{State: TerminatingPod, Orphan: true, HasConfig: true}) {
				t.Fatalf("SyncKnownPods: %+v", got)
			}
			e.settle()
			e.wantState("a", fsm.Finished)
			e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
			e.wantGraces("a", c.want)
			if !e.w.ShouldPodContentBeRemoved("a") {
				t.Fatal("an orphan is deleted: its content goes once it terminated")
			}
			if got := e.w.SyncKnownPods(nil); len(got) != 0 {
				t.Fatalf("finished orphan kept: %+v", got)
			}
			e.wantState("a", fsm.Absent)
		})
	}
}

func withSpecGrace(p *v1.Pod, g *int64) *v1.Pod {
	q := p.DeepCopy()
	q.Spec.TerminationGracePeriodSeconds = g
	return q
}

// TestOrphanTerminatingIsRequeued: an orphan whose terminating sync failed
// is retried by SyncKnownPods at once, without waiting for its back-off.
func TestOrphanTerminatingIsRequeued(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	e.syncer.script("a", "SyncTerminatingPod", outcome{err: errSync}, outcome{err: errSync})
	e.update(killOp(pod, nil))
	e.wantFns("a", "SyncPod", "SyncTerminatingPod")
	e.w.SyncKnownPods([]*v1.Pod{pod}) // desired: left to its back-off
	e.settle()
	e.wantFns("a", "SyncPod", "SyncTerminatingPod")
	e.w.SyncKnownPods(nil) // orphan: requeued now
	e.settle()
	e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatingPod")
	e.w.SyncKnownPods(nil)
	e.settle()
	e.wantState("a", fsm.Finished)
	e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatingPod", "SyncTerminatingPod", "SyncTerminatedPod")
}

// TestUIDReuse: kill, a create while terminating (restart requested), the
// worker finishes, SyncKnownPods removes the tombstone although the pod is
// desired, and a new create starts a new incarnation that runs SyncPod.
func TestUIDReuse(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	g := e.hold("a", "SyncTerminatingPod", outcome{})
	kpo, done := notify(nil)
	e.send(killOp(pod, kpo))
	g.wait()
	e.send(createOp(withVersion(pod, "2")))
	e.wantState("a", fsm.Terminating)
	g.release()
	e.settle()
	wantClosed(t, done, "kill")
	e.wantState("a", fsm.Finished)
	e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod") // the create was not queued
	got := e.w.SyncKnownPods([]*v1.Pod{pod})
	if _, kept := got["a"]; kept {
		t.Fatalf("restart requested: the tombstone should be removed, got %+v", got)
	}
	e.wantState("a", fsm.Absent)
	e.update(createOp(withVersion(pod, "3")))
	e.wantState("a", fsm.Running)
	calls := e.syncer.calls("a")
	if last := calls[len(calls)-1]; last.fn != "SyncPod" || last.updateType != SyncPodCreate || last.version != "3" {
		t.Fatalf("new incarnation's call %+v, want SyncPod(create) of version 3", last)
	}
	if e.w.IsPodTerminationRequested("a") || e.w.IsPodKnownTerminated("a") {
		t.Fatal("the new incarnation inherited the old one's termination")
	}
}

// TestFinishedDesiredPodKeepsTombstone: a finished pod that is still desired
// and did not ask for a restart keeps its record, so it cannot start again.
func TestFinishedDesiredPodKeepsTombstone(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	e.update(killOp(pod, nil))
	for range 2 {
		if got := e.w.SyncKnownPods([]*v1.Pod{pod}); got["a"] != (PodWorkerSync{State: TerminatedPod, HasConfig: true}) {
			t.Fatalf("SyncKnownPods: %+v", got)
		}
		e.update(updateOp(pod))
	}
	e.wantState("a", fsm.Finished)
	e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
}

// TestSyncKnownPodsSummaries: the returned map describes every kept record.
func TestSyncKnownPodsSummaries(t *testing.T) {
	e := start(t, Options{})
	desired, static, orphan := newPod("d", "web", false), newPod("s", "etcd", true), newPod("o", "db", false)
	e.update(createOp(desired))
	e.update(createOp(static))
	e.update(createOp(orphan))
	g := e.hold("o", "SyncTerminatingPod", outcome{})
	gr := e.hold("r", "SyncTerminatingRuntimePod", outcome{})
	e.send(runtimeKillOp("r", "ghost", nil))
	gr.wait()
	got := e.w.SyncKnownPods([]*v1.Pod{desired, static})
	g.wait() // the orphan is terminating
	want := map[types.UID]PodWorkerSync{
		"d": {State: SyncPod, HasConfig: true},
		"s": {State: SyncPod, HasConfig: true, Static: true},
		"o": {State: TerminatingPod, Orphan: true, HasConfig: true},
		"r": {State: TerminatingPod, Orphan: true},
	}
	if !maps.Equal(got, want) {
		t.Fatalf("SyncKnownPods:\n got %+v\nwant %+v", got, want)
	}
	g.release()
	gr.release()
	e.settle()
	e.wantState("r", fsm.Absent)
	e.wantState("o", fsm.Finished)
	got = e.w.SyncKnownPods([]*v1.Pod{desired, static})
	delete(want, "o")
	delete(want, "r")
	if !maps.Equal(got, want) {
		t.Fatalf("second SyncKnownPods:\n got %+v\nwant %+v", got, want)
	}
}

// TestRuntimeOnlyPod: a pod known only to the runtime gets
// SyncTerminatingRuntimePod (nothing else), then its record is gone.
func TestRuntimeOnlyPod(t *testing.T) {
	e := start(t, Options{})
	kpo, done := notify(nil)
	g := e.hold("r", "SyncTerminatingRuntimePod", outcome{})
	e.send(runtimeKillOp("r", "ghost", kpo))
	g.wait()
	if !e.w.IsPodTerminationRequested("r") || !e.w.ShouldPodContainersBeTerminating("r") || e.w.ShouldPodContentBeRemoved("r") {
		t.Fatal("runtime-only pod: termination requested and started; content kept until it terminated")
	}
	wantOpen(t, done, "runtime-only kill while its sync runs")
	g.release()
	e.settle()
	wantClosed(t, done, "runtime-only kill")
	e.wantFns("r", "SyncTerminatingRuntimePod")
	e.wantState("r", fsm.Absent)
	if got := e.w.SyncKnownPods(nil); len(got) != 0 {
		t.Fatalf("SyncKnownPods: %+v", got)
	}
}

// TestRuntimeKillOfKnownPod: a runtime-only kill for a UID whose config is
// known is a normal kill of that pod: SyncTerminatingPod with the pod, then
// SyncTerminatedPod; the pod counts as deleted.
func TestRuntimeKillOfKnownPod(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(withVersion(pod, "7")))
	e.update(runtimeKillOp("a", "web", &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(1)}))
	e.wantState("a", fsm.Finished)
	e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
	e.wantGraces("a", 1)
	if c := e.syncer.calls("a")[1]; c.version != "7" {
		t.Fatalf("SyncTerminatingPod got pod version %q, want the known pod", c.version)
	}
	if !e.w.ShouldPodContentBeRemoved("a") {
		t.Fatal("a pod killed as a runtime orphan is deleted")
	}
}

// TestRuntimeKillOfTerminatedPodIgnored: a runtime-only kill for a pod that
// terminated but has not finished is a stale cache entry: ignored.
func TestRuntimeKillOfTerminatedPodIgnored(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	g := e.hold("a", "SyncTerminatedPod", outcome{})
	e.send(killOp(pod, nil))
	g.wait()
	kpo, done := notify(int64p(1))
	e.send(runtimeKillOp("a", "web", kpo))
	wantClosed(t, done, "ignored runtime-only kill")
	e.wantState("a", fsm.Terminated)
	g.release()
	e.settle()
	e.wantState("a", fsm.Finished)
	e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
	if e.w.ShouldPodContentBeRemoved("a") {
		t.Fatal("the ignored runtime kill marked the pod deleted")
	}
}

// TestRuntimeOnlyPodGetsConfig: a runtime-only pod whose config shows up
// before the worker took the kill terminates as that pod.
func TestRuntimeOnlyPodGetsConfig(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("r", "ghost", false)
	e.locked(func(c *Core) {
		e.coreUpdate(c, runtimeKillOp("r", "ghost", nil))
		e.coreUpdate(c, updateOp(pod))
	})
	e.settle()
	e.wantState("r", fsm.Finished)
	e.wantFns("r", "SyncTerminatingPod", "SyncTerminatedPod")
	e.wantGraces("r", 1)
}

// TestRuntimeOnlyPodConfigArrivesWhileTerminating: a runtime-only pod whose
// SyncTerminatingRuntimePod failed receives its config before the retry;
// it is then terminated as that pod and cleaned up, and its record stays
// until SyncKnownPods (it is no longer runtime-only).
func TestRuntimeOnlyPodConfigArrivesWhileTerminating(t *testing.T) {
	e := start(t, Options{})
	e.syncer.script("r", "SyncTerminatingRuntimePod", outcome{err: errSync})
	e.update(runtimeKillOp("r", "ghost", nil))
	e.wantState("r", fsm.Terminating)
	e.update(updateOp(newPod("r", "ghost", false)))
	e.wantState("r", fsm.Finished)
	e.wantFns("r", "SyncTerminatingRuntimePod", "SyncTerminatingPod", "SyncTerminatedPod")
	e.wantGraces("r", 1)
	if got := e.w.SyncKnownPods(nil); len(got) != 0 {
		t.Fatalf("SyncKnownPods kept %+v", got)
	}
}
