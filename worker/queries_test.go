package worker

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
)

// answers are the query methods' results for one UID.
type answers struct {
	knownTerminated       bool // IsPodKnownTerminated
	couldRun              bool // CouldHaveRunningContainers
	finished              bool // ShouldPodBeFinished
	terminationRequested  bool // IsPodTerminationRequested
	containersTerminating bool // ShouldPodContainersBeTerminating
	runtimeRemoved        bool // ShouldPodRuntimeBeRemoved
	contentRemoved        bool // ShouldPodContentBeRemoved
}

func answersOf(w *PodWorkers, uid types.UID) answers {
	return answers{
		knownTerminated:       w.IsPodKnownTerminated(uid),
		couldRun:              w.CouldHaveRunningContainers(uid),
		finished:              w.ShouldPodBeFinished(uid),
		terminationRequested:  w.IsPodTerminationRequested(uid),
		containersTerminating: w.ShouldPodContainersBeTerminating(uid),
		runtimeRemoved:        w.ShouldPodRuntimeBeRemoved(uid),
		contentRemoved:        w.ShouldPodContentBeRemoved(uid),
	}
}

// consistent checks the invariants that relate the queries (reference
// 3.4); 33 and 34 hold only for known UIDs.
func (a answers) consistent(t *testing.T, known bool) {
	t.Helper()
	if a.knownTerminated && a.couldRun {
		t.Error("known terminated but could have running containers")
	}
	if a.runtimeRemoved == a.couldRun {
		t.Error("ShouldPodRuntimeBeRemoved must be the negation of CouldHaveRunningContainers")
	}
	if known && a.containersTerminating && !a.terminationRequested {
		t.Error("containers terminating without termination requested")
	}
	if known && a.finished && !a.runtimeRemoved {
		t.Error("finished but the runtime is not removable")
	}
}

// TestQueriesForUnknownUIDs: before the first SyncKnownPods an unknown UID
// could be running and nothing may be torn down; after it, the opposite.
// IsPodKnownTerminated and IsPodTerminationRequested stay false.
func TestQueriesForUnknownUIDs(t *testing.T) {
	e := start(t, Options{})
	before := answers{couldRun: true}
	if got := answersOf(e.w, "x"); got != before {
		t.Fatalf("before SyncKnownPods: %+v, want %+v", got, before)
	}
	a := newPod("a", "web", false)
	e.update(createOp(a))
	if got := answersOf(e.w, "x"); got != before {
		t.Fatalf("other pods known, before SyncKnownPods: %+v, want %+v", got, before)
	}
	after := answers{finished: true, containersTerminating: true, runtimeRemoved: true, contentRemoved: true}
	for range 2 { // it never goes back
		e.w.SyncKnownPods([]*v1.Pod{a})
		if got := answersOf(e.w, "x"); got != after {
			t.Fatalf("after SyncKnownPods: %+v, want %+v", got, after)
		}
		after.consistent(t, false)
	}
	if !e.w.CouldHaveRunningContainers("a") || e.w.ShouldPodRuntimeBeRemoved("a") {
		t.Fatal("a known running pod: its containers may run, its runtime stays")
	}
}

// TestQueriesByState: the query answers for a known UID in each phase.
func TestQueriesByState(t *testing.T) {
	type setup func(e *env) (release func())
	none := func() {}
	cases := []struct {
		name  string
		uid   types.UID
		setup setup
		want  answers
	}{
		{"waiting static pod", "b", func(e *env) func() {
			e.update(createOp(newPod("a", "etcd", true)))
			e.update(createOp(newPod("b", "etcd", true)))
			e.wantState("b", fsm.Waiting)
			return none
		}, answers{couldRun: true}},
		{"running", "a", func(e *env) func() {
			e.update(createOp(newPod("a", "web", false)))
			return none
		}, answers{couldRun: true}},
		{"termination requested while SyncPod runs", "a", func(e *env) func() {
			g := e.hold("a", "SyncPod", outcome{})
			e.send(createOp(newPod("a", "web", false)))
			g.wait()
			e.w.SyncKnownPods(nil) // orphaned: deleted, termination requested, SyncPod not cancelled
			e.wantState("a", fsm.TerminationRequested)
			return g.release
		}, answers{couldRun: true, terminationRequested: true}},
		{"terminating", "a", func(e *env) func() {
			pod := newPod("a", "web", false)
			e.update(createOp(pod))
			g := e.hold("a", "SyncTerminatingPod", outcome{})
			e.send(killOp(pod, nil))
			g.wait()
			return g.release
		}, answers{couldRun: true, terminationRequested: true, containersTerminating: true}},
		{"terminating after an eviction", "a", func(e *env) func() {
			pod := newPod("a", "web", false)
			e.update(createOp(pod))
			g := e.hold("a", "SyncTerminatingPod", outcome{})
			e.send(killOp(pod, &KillPodOptions{Evict: true}))
			g.wait()
			return g.release
		}, answers{couldRun: true, terminationRequested: true, containersTerminating: true, contentRemoved: true}},
		{"terminating runtime-only pod", "r", func(e *env) func() {
			g := e.hold("r", "SyncTerminatingRuntimePod", outcome{})
			e.send(runtimeKillOp("r", "ghost", nil))
			g.wait()
			return g.release
		}, answers{couldRun: true, terminationRequested: true, containersTerminating: true}},
		{"terminated", "a", func(e *env) func() {
			pod := newPod("a", "web", false)
			e.update(createOp(pod))
			g := e.hold("a", "SyncTerminatedPod", outcome{})
			e.send(killOp(pod, nil))
			g.wait()
			return g.release
		}, answers{knownTerminated: true, terminationRequested: true, containersTerminating: true, runtimeRemoved: true}},
		{"terminated after a deletion", "a", func(e *env) func() {
			pod := newPod("a", "web", false)
			e.update(createOp(pod))
			g := e.hold("a", "SyncTerminatedPod", outcome{})
			e.send(updateOp(deleting(pod, 3)))
			g.wait()
			return g.release
		}, answers{knownTerminated: true, terminationRequested: true, containersTerminating: true, runtimeRemoved: true, contentRemoved: true}},
		{"finished", "a", func(e *env) func() {
			pod := newPod("a", "web", false)
			e.update(createOp(pod))
			e.update(killOp(pod, nil))
			return none
		}, answers{knownTerminated: true, finished: true, terminationRequested: true, containersTerminating: true, runtimeRemoved: true}},
		{"finished static pod that never started", "b", func(e *env) func() {
			e.update(createOp(newPod("a", "etcd", true)))
			b := newPod("b", "etcd", true)
			e.update(createOp(b))
			e.update(killOp(b, nil))
			return none
		}, answers{knownTerminated: true, finished: true, terminationRequested: true, containersTerminating: true, runtimeRemoved: true}},
		{"first seen terminal", "a", func(e *env) func() {
			cache := e.w.cache.(*fakeCache)
			cache.set("a", exitedStatus("a"))
			g := e.hold("a", "SyncTerminatedPod", outcome{})
			e.send(createOp(inPhase(newPod("a", "web", false), v1.PodSucceeded)))
			g.wait()
			return g.release
		}, answers{knownTerminated: true, terminationRequested: true, containersTerminating: true, runtimeRemoved: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Options{StatusCache: newFakeCache()})
			release := c.setup(e)
			got := answersOf(e.w, c.uid)
			if got != c.want {
				t.Errorf("answers %+v\n         want %+v", got, c.want)
			}
			got.consistent(t, true)
			release()
			e.settle()
		})
	}
}

// TestQueriesOfRemovedRecord: once SyncKnownPods removed a finished
// orphan, its UID reads as any unknown one after a sync: nothing runs,
// and IsPodKnownTerminated is false again.
func TestQueriesOfRemovedRecord(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	e.update(killOp(pod, nil))
	e.w.SyncKnownPods(nil)
	want := answers{finished: true, containersTerminating: true, runtimeRemoved: true, contentRemoved: true}
	if got := answersOf(e.w, "a"); got != want {
		t.Fatalf("removed record: %+v, want %+v", got, want)
	}
}
