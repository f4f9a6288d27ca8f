package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/fsm"
)

// coreEnv is a Core without a shell: the test calls its inputs and reads
// its effects (TakeEffects), as the explorer does.
type coreEnv struct {
	t     *testing.T
	c     *Core
	clock *clocktesting.FakeClock
	work  map[types.UID]Work
	// names maps the waiter IDs the test registered to their names;
	// syncing lists the pods that got a Work since their last CancelSync.
	names      map[WaiterID]string
	lastWaiter WaiterID
	syncing    map[types.UID]bool
}

func newCoreEnv(t *testing.T) *coreEnv {
	clock := clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0))
	return &coreEnv{t: t, c: NewCore(Options{Clock: clock, ResyncInterval: rapidResync, BackOffPeriod: rapidBackoff, CheckedFSM: true}), clock: clock,
		work: map[types.UID]Work{}, names: map[WaiterID]string{}, syncing: map[types.UID]bool{}}
}

// waiter registers a kill waiter known to the test by name.
func (e *coreEnv) waiter(name string) WaiterID {
	e.lastWaiter++
	e.names[e.lastWaiter] = name
	return e.lastWaiter
}

// effects takes the Core's effects and describes them: "RunLoop a",
// "ArmTimer a resync" (or "backoff"), "StopTimer a", "CloseChannel a k1",
// "CancelSync a". A CancelSync must follow a Work handed out for the pod
// since its last CancelSync, and an ArmTimer's delay must lie in
// [d, 1.5d).
func (e *coreEnv) effects() []string {
	e.t.Helper()
	var out []string
	for _, ef := range e.c.TakeEffects(nil) {
		s := ef.Kind.String() + " " + string(ef.UID)
		switch ef.Kind {
		case ArmTimer:
			d := ef.Delay
			switch {
			case d >= rapidResync && d <= rapidResync*3/2:
				s += " resync"
			case d >= rapidBackoff && d <= rapidBackoff*3/2:
				s += " backoff"
			default:
				e.t.Fatalf("ArmTimer %s due in %v: neither the resync nor the back-off period", ef.UID, d)
			}
		case CloseChannel:
			name, ok := e.names[ef.Waiter]
			if !ok {
				e.t.Fatalf("CloseChannel %s of a waiter the test never handed over (or twice)", ef.UID)
			}
			delete(e.names, ef.Waiter)
			s += " " + name
		case CancelSync:
			if !e.syncing[ef.UID] {
				e.t.Fatalf("CancelSync %s: no Work handed out since its last CancelSync", ef.UID)
			}
			delete(e.syncing, ef.UID)
		}
		out = append(out, s)
	}
	return out
}

// next runs Next and keeps the Work it hands out.
func (e *coreEnv) next(uid types.UID) bool {
	w, ok := e.c.Next(uid)
	if ok {
		e.work[uid] = w
		e.syncing[uid] = true
	}
	return ok
}

func (e *coreEnv) done(uid types.UID, terminal bool, err error) {
	w, ok := e.work[uid]
	if !ok {
		e.t.Fatalf("Done(%s): nothing in flight", uid)
	}
	delete(e.work, uid)
	e.c.Done(w, terminal, err)
}

func (e *coreEnv) update(o UpdatePodOptions) {
	e.t.Helper()
	if err := e.c.UpdatePod(o, UpdateInput{}); err != nil {
		e.t.Fatalf("UpdatePod: %v", err)
	}
}

// kill sends o as a kill with a waiter named name.
func (e *coreEnv) kill(o UpdatePodOptions, name string) error {
	o.KillPodOptions = &KillPodOptions{CompletedCh: make(chan struct{})} // the Core never reads it
	return e.c.UpdatePod(o, UpdateInput{Waiter: e.waiter(name)})
}

// step is one input of a TestCoreEffects case and the effects it must
// record, in order.
type step struct {
	do   func(e *coreEnv)
	want []string
}

// TestCoreEffects: the Core records what its shell must do as Effects, in
// order, and TakeEffects hands each over once.
func TestCoreEffects(t *testing.T) {
	a, s1, s2 := newPod("a", "web", false), newPod("s1", "etcd", true), newPod("s2", "etcd", true)
	// kill sends o with a completion channel named name.
	kill := func(e *coreEnv, o *UpdatePodOptions, name string) {
		e.t.Helper()
		if err := e.kill(*o, name); err != nil {
			e.t.Fatalf("UpdatePod: %v", err)
		}
	}
	cases := []struct {
		name      string
		unordered bool // pods' effects come in no particular order
		steps     []step
	}{{
		name: "a new pod's loop runs SyncPod, then resyncs",
		steps: []step{
			{func(e *coreEnv) { e.update(createOp(a)) }, []string{"RunLoop a"}},
			{func(e *coreEnv) { e.update(updateOp(a)) }, nil}, // the loop runs: no second RunLoop
			{func(e *coreEnv) { e.next("a") }, nil},
			{func(e *coreEnv) { e.done("a", false, nil) }, []string{"ArmTimer a resync"}},
			{func(e *coreEnv) { e.next("a") }, nil}, // nothing queued: the loop ends
			{func(e *coreEnv) { e.c.Timer("a") }, []string{"RunLoop a"}},
		},
	}, {
		name: "a failed sync is retried after the back-off",
		steps: []step{
			{func(e *coreEnv) { e.update(createOp(a)) }, []string{"RunLoop a"}},
			{func(e *coreEnv) { e.next("a") }, nil},
			{func(e *coreEnv) { e.done("a", false, errSync) }, []string{"ArmTimer a backoff"}},
		},
	}, {
		name: "a kill cancels the SyncPod in flight and is released when the pod terminated",
		steps: []step{
			{func(e *coreEnv) { e.update(createOp(a)) }, []string{"RunLoop a"}},
			{func(e *coreEnv) { e.next("a") }, nil},
			{func(e *coreEnv) { o := killOp(a, nil); kill(e, &o, "k1") }, []string{"CancelSync a"}},
			{func(e *coreEnv) { o := killOp(a, nil); kill(e, &o, "k2") }, nil}, // kept too
			{func(e *coreEnv) { e.done("a", false, context.Canceled) }, nil},   // queued: the loop goes on, no timer
			{func(e *coreEnv) { e.next("a") }, nil},                            // a new context: the next CancelSync is its
			{func(e *coreEnv) {
				if e.work["a"].Func != fsm.InFlightSyncTerminatingPod {
					e.t.Fatalf("after the kill: %s, want SyncTerminatingPod", e.work["a"].Func)
				}
				e.done("a", false, nil)
			}, []string{"CloseChannel a k1", "CloseChannel a k2"}},
			{func(e *coreEnv) { e.next("a"); e.done("a", false, nil) }, []string{"CancelSync a", "StopTimer a"}}, // finished: context and timer dropped
			{func(e *coreEnv) { e.next("a") }, nil},
		},
	}, {
		name: "a kill that cannot be kept is released at once",
		steps: []step{
			{func(e *coreEnv) { o := killOp(a, nil); kill(e, &o, "k1") }, []string{"RunLoop a"}},
			{func(e *coreEnv) { o := updateOp(a); kill(e, &o, "k2") }, nil}, // terminating: kept as a kill waiter
			{func(e *coreEnv) { e.next("a"); e.done("a", false, nil) }, []string{"CloseChannel a k1", "CloseChannel a k2"}},
			{func(e *coreEnv) { o := killOp(a, nil); kill(e, &o, "k3") }, []string{"CloseChannel a k3"}}, // terminated
			{func(e *coreEnv) { e.next("a"); e.done("a", false, nil) }, []string{"CancelSync a", "StopTimer a"}},
			{func(e *coreEnv) { o := killOp(a, nil); kill(e, &o, "k4") }, []string{"CloseChannel a k4"}}, // finished
			{func(e *coreEnv) {
				if err := e.kill(UpdatePodOptions{UpdateType: 9, Pod: a}, "k5"); !errors.Is(err, ErrInvalidUpdate) {
					e.t.Fatalf("invalid update: %v", err)
				}
			}, []string{"CloseChannel a k5"}},
		},
	}, {
		name: "a static pod parks behind the holder of its full name, then an orphan that never ran is removed",
		steps: []step{
			{func(e *coreEnv) { e.update(createOp(s1)); e.next("s1") }, []string{"RunLoop s1"}},
			{func(e *coreEnv) { e.update(createOp(s2)) }, []string{"RunLoop s2"}},
			{func(e *coreEnv) {
				if e.next("s2") {
					e.t.Fatal("a parked static pod got work")
				}
			}, []string{"ArmTimer s2 backoff"}},
			{func(e *coreEnv) { o := killOp(s2, nil); kill(e, &o, "k1") }, []string{"RunLoop s2"}},
			{func(e *coreEnv) { e.c.SyncKnownPods([]*v1.Pod{s1}) }, []string{"CloseChannel s2 k1", "StopTimer s2"}},
			{func(e *coreEnv) { e.next("s2") }, nil}, // the loop of the removed record ends
		},
	}, {
		name:      "CancelAll cancels every sync in flight, and nothing else",
		unordered: true,
		steps: []step{
			{func(e *coreEnv) { e.update(createOp(a)); e.update(createOp(s1)); e.next("a"); e.next("s1") }, []string{"RunLoop a", "RunLoop s1"}},
			{func(e *coreEnv) { e.c.CancelAll() }, []string{"CancelSync a", "CancelSync s1"}},
			{func(e *coreEnv) { e.c.CancelAll() }, nil}, // no Work handed out since
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newCoreEnv(t)
			for i, s := range c.steps {
				s.do(e)
				got := e.effects()
				if c.unordered {
					slices.Sort(got)
				}
				if !slices.Equal(got, s.want) {
					t.Fatalf("step %d: effects %q, want %q", i+1, got, s.want)
				}
			}
			if got := e.c.TakeEffects(nil); len(got) != 0 {
				t.Fatalf("TakeEffects handed out %v twice", got)
			}
		})
	}
}

// TestCoreCloneCopiesEffects: a clone starts with the effects not yet
// taken, and the two cores take theirs independently.
func TestCoreCloneCopiesEffects(t *testing.T) {
	e := newCoreEnv(t)
	e.update(createOp(newPod("a", "web", false)))
	cp := e.c.Clone()
	e.update(createOp(newPod("b", "db", false)))
	describe := func(es []Effect) []string {
		var out []string
		for _, ef := range es {
			out = append(out, fmt.Sprintf("%s %s", ef.Kind, ef.UID))
		}
		return out
	}
	if got := describe(cp.TakeEffects(nil)); !slices.Equal(got, []string{"RunLoop a"}) {
		t.Fatalf("the clone's effects: %v", got)
	}
	if got := describe(e.c.TakeEffects(nil)); !slices.Equal(got, []string{"RunLoop a", "RunLoop b"}) {
		t.Fatalf("the original's effects: %v", got)
	}
	if _, ok := cp.Record("b"); ok {
		t.Fatal("the clone saw an update given to the original")
	}
	// The clone's loop of a runs; its Next takes the create.
	if w, ok := cp.Next("a"); !ok || w.Func != fsm.InFlightSyncPod {
		t.Fatalf("the clone's Next(a) = %v, %v", w.Func, ok)
	}
	if r, _ := e.c.Record("a"); r.Vars.InFlight != fsm.InFlightNone {
		t.Fatalf("the original's record changed with the clone's: %+v", r.Vars)
	}
}

// TestEffectKindStrings: every kind has a name.
func TestEffectKindStrings(t *testing.T) {
	for k, want := range map[EffectKind]string{RunLoop: "RunLoop", ArmTimer: "ArmTimer", StopTimer: "StopTimer", CloseChannel: "CloseChannel", CancelSync: "CancelSync", 0: "EffectKind(invalid)", 99: "EffectKind(invalid)"} {
		if got := k.String(); got != want {
			t.Errorf("EffectKind(%d) = %q, want %q", k, got, want)
		}
	}
}
