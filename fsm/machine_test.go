package fsm

import (
	"errors"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

type recorder struct {
	transitions []Transition
	rejected    []error
}

func (r *recorder) Transition(t Transition) { r.transitions = append(r.transitions, t) }
func (r *recorder) Rejected(_ types.UID, _ State, _ Event, err error) {
	r.rejected = append(r.rejected, err)
}

func mustFire(t *testing.T, m *Machine, uid types.UID, fullName string, ev Event, p Params) Transition {
	t.Helper()
	tr, err := m.Fire(uid, fullName, ev, p)
	if err != nil {
		t.Fatalf("%s %s: %v", uid, ev, err)
	}
	return tr
}

var (
	plain       = Params{GraceOverride: NoGrace, SpecGrace: 30}
	staticPlain = Params{Static: true, GraceOverride: NoGrace, SpecGrace: 30}
)

// TestLifecycle drives one pod through create, sync, kill, termination and
// cleanup, checking each state, the effects and the observer.
func TestLifecycle(t *testing.T) {
	obs := &recorder{}
	m := New(obs)
	steps := []struct {
		ev      Event
		p       Params
		to      State
		effects Effect
	}{
		{Create, plain, Waiting, TakeUpdate},
		{Dequeue, Params{}, Running, Start},
		{SyncPodDone, Params{}, Running, Resync},
		{Kill, Params{GraceOverride: 5, Notify: true}, TerminationRequested, KeepNotify | Cancel | TakeUpdate},
		{Dequeue, Params{}, Terminating, Start},
		{Kill, Params{GraceOverride: 2, Notify: true}, Terminating, KeepNotify | Cancel | TakeUpdate},
		{TerminatingFailed, Params{}, Terminating, Backoff},
		{Dequeue, Params{}, Terminating, Start},
		{TerminatingDone, Params{}, Terminated, CloseWaiters},
		{Dequeue, Params{}, Terminated, Start},
		{TerminatedDone, Params{}, Finished, Exit},
		{Update, plain, Finished, 0},
	}
	for i, s := range steps {
		tr := mustFire(t, m, "a", "", s.ev, s.p)
		if tr.To != s.to || tr.Effects != s.effects {
			t.Fatalf("step %d %s: went to %s with %s, want %s with %s", i, s.ev, tr.To, tr.Effects, s.to, s.effects)
		}
	}
	if r, _ := m.Get("a"); r.Vars.Grace != 2 || !r.Vars.Started || r.Vars.Waiters {
		t.Errorf("finished record: %+v; want grace shrunk to 2, started, no waiters", r.Vars)
	}
	if len(obs.transitions) != len(steps) || obs.transitions[3].Row != "RunningKillTerminate" {
		t.Errorf("observer saw %d transitions", len(obs.transitions))
	}
	mustFire(t, m, "a", "", Create, plain)
	if err := m.SyncKnownPods(func(types.UID) Params { return plain }, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Get("a"); ok || !m.Synced() {
		t.Errorf("a restart-requested finished record must be removed by SyncKnownPods")
	}
}

func TestFireRejectsWithTypedErrors(t *testing.T) {
	obs := &recorder{}
	m := New(obs)
	_, err := m.Fire("a", "", SyncPodDone, Params{})
	var none *NoTransitionError
	if !errors.As(err, &none) || none.State != Absent || none.Event != SyncPodDone {
		t.Fatalf("SyncPodDone on an absent pod: %v, want NoTransitionError", err)
	}
	mustFire(t, m, "a", "", Create, plain)
	_, err = m.Fire("a", "", SyncPodDone, Params{})
	if !errors.As(err, &none) {
		t.Fatalf("SyncPodDone in Waiting: %v, want NoTransitionError", err)
	}
	mustFire(t, m, "a", "", Dequeue, Params{})
	_, err = m.Fire("a", "", Dequeue, Params{}) // SyncPod is in flight
	var rejected *GuardRejectedError
	if !errors.As(err, &rejected) || rejected.State != Running || rejected.Event != Dequeue || !slices.Contains(rejected.Guards, "RunningDequeueSync") {
		t.Fatalf("Dequeue with a sync in flight: %v, want GuardRejectedError naming RunningDequeueSync", err)
	}
	if _, err := m.Fire("a", "", Event(200), Params{}); !errors.As(err, &none) {
		t.Fatalf("unknown event: %v", err)
	}
	if len(obs.rejected) != 4 {
		t.Errorf("observer saw %d rejections, want 4", len(obs.rejected))
	}
	if r, _ := m.Get("a"); r.State != Running || r.Vars.InFlight != InFlightSyncPod {
		t.Errorf("a rejected event changed the record: %+v", r)
	}
}

// TestStaticPodsTakeTheSlotInArrivalOrder: two static UIDs with one full
// name never run at once, and the one seen first starts first.
func TestStaticPodsTakeTheSlotInArrivalOrder(t *testing.T) {
	m := New(nil)
	const name = "web_default"
	mustFire(t, m, "b", name, Create, staticPlain)
	mustFire(t, m, "a", name, Create, staticPlain)
	if got := m.Waiting(name); !slices.Equal(got, []types.UID{"b", "a"}) {
		t.Fatalf("waiting order %v, want [b a]", got)
	}
	if tr := mustFire(t, m, "a", name, Dequeue, Params{}); tr.To != Waiting || tr.Row != "WaitingDequeuePark" {
		t.Fatalf("a started before b: %s", tr.Row)
	}
	if tr := mustFire(t, m, "b", name, Dequeue, Params{}); tr.To != Running {
		t.Fatalf("b did not start: %s", tr.Row)
	}
	if holder, _ := m.SlotHolder(name); holder != "b" {
		t.Fatalf("slot holder %q, want b", holder)
	}
	mustFire(t, m, "a", name, Requeue, Params{})
	if tr := mustFire(t, m, "a", name, Dequeue, Params{}); tr.To != Waiting {
		t.Fatalf("a started while b holds the slot")
	}
	for _, ev := range []Event{SyncPodDone, Kill, Dequeue, TerminatingDone, Dequeue, TerminatedDone} {
		mustFire(t, m, "b", name, ev, plain)
	}
	if _, held := m.SlotHolder(name); held {
		t.Fatalf("a finished pod still holds the slot")
	}
	mustFire(t, m, "a", name, Requeue, Params{})
	if tr := mustFire(t, m, "a", name, Dequeue, Params{}); tr.To != Running {
		t.Fatalf("a did not start after b finished: %s", tr.Row)
	}
	if len(m.Waiting(name)) != 0 {
		t.Errorf("waiting list not empty: %v", m.Waiting(name))
	}
}

// TestSelfTransitionsSucceed covers looplab's trap: a row whose source and
// target state are equal would make looplab return NoTransitionError; such
// rows are applied without looplab.
func TestSelfTransitionsSucceed(t *testing.T) {
	m := New(nil)
	mustFire(t, m, "a", "", Create, plain)
	if tr := mustFire(t, m, "a", "", Update, plain); tr.From != Waiting || tr.To != Waiting {
		t.Fatalf("self-transition reported %s -> %s", tr.From, tr.To)
	}
	if tr := mustFire(t, m, "a", "", RuntimeUpdate, Params{}); tr.Row != "WaitingRuntimeUpdateIgnored" {
		t.Fatalf("ignored input fired %s", tr.Row)
	}
}

// TestSyncKnownPodsVisitsRecordsInUIDOrder: map iteration order must not
// leak into the order of transitions.
func TestSyncKnownPodsVisitsRecordsInUIDOrder(t *testing.T) {
	m := New(nil)
	uids := []types.UID{"e", "b", "d", "a", "c"}
	for _, u := range uids {
		mustFire(t, m, u, "", Create, plain)
	}
	for range 5 {
		var seen []types.UID
		err := m.SyncKnownPods(func(uid types.UID) Params { return Params{Orphan: true} }, func(tr Transition) { seen = append(seen, tr.Pod) })
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(seen) {
			t.Fatalf("SyncKnownPods order %v", seen)
		}
		for _, u := range uids {
			mustFire(t, m, u, "", Create, plain)
		}
	}
}

// TestCloneIsIndependent: a clone and its original branch apart.
func TestCloneIsIndependent(t *testing.T) {
	m := New(nil)
	const name = "web_default"
	mustFire(t, m, "a", name, Create, staticPlain)
	mustFire(t, m, "b", name, Create, staticPlain)
	c := m.Clone()
	mustFire(t, c, "a", name, Dequeue, Params{})
	mustFire(t, c, "b", name, Kill, plain)
	if r, _ := m.Get("a"); r.State != Waiting {
		t.Errorf("the original moved with its clone: a is %s", r.State)
	}
	if holder, held := m.SlotHolder(name); held {
		t.Errorf("the original's slot is held by %s", holder)
	}
	if got := m.Waiting(name); !slices.Equal(got, []types.UID{"a", "b"}) {
		t.Errorf("the original's waiting order is %v", got)
	}
	if holder, _ := c.SlotHolder(name); holder != "a" || len(c.Waiting(name)) != 0 {
		t.Errorf("the clone did not move: holder %q, waiting %v", holder, c.Waiting(name))
	}
}
