package fsm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	looplab "github.com/looplab/fsm"
	"k8s.io/apimachinery/pkg/types"
)

// Machine holds the lifecycle record of every known pod UID. It is not safe
// for concurrent use: its owner serialises every call.
type Machine struct {
	// lf runs every transition. Looplab keeps one current state per FSM and
	// building one costs ~15µs, so a single FSM serves all pods: fire sets
	// it to the pod's state, then fires the row's event. Nothing else
	// touches it.
	lf  *looplab.FSM
	ctx context.Context
	// checked runs looplab's full Event for every state change (NewChecked);
	// otherwise Fire checks the change against looplabTo (checkLooplab).
	checked bool
	// looplabTo holds, per row (an index into rows), the state looplab's
	// event of that row moves to from the row's source state, as looplab
	// answered when the machine was built, or numStates when looplab has no
	// such event. Shared by clones: looplab's table never changes.
	looplabTo *[len(rows)]State

	// recs holds a record for every UID whose state HasRecord, and index
	// maps each such UID to its position in recs; a UID without one is
	// Absent (a removed record is deleted, not kept). A record lives in a
	// slice rather than as a map value so that a transition updates it in
	// place: one hash of the UID per Fire instead of a lookup and a store,
	// while Clone still copies values only (the slice and the index).
	recs  []record
	index map[types.UID]int32
	// hit caches the last UID index found (hitUID at hitAt): the engine
	// looks a pod up and fires its event in one step (Core.Next's Get and
	// Fire), so the second lookup costs a string comparison.
	hitUID types.UID
	hitAt  int32

	// slots maps a full name to the static UID that holds it: a record with
	// Static and Started in a MayHoldSlot state. At most one per full name.
	slots map[string]types.UID

	// waiting lists, per full name, the static UIDs in state Waiting, in
	// the order their records were created. Every static Waiting record is
	// listed exactly once; nothing else is.
	waiting map[string][]types.UID

	// syncs counts SyncKnownPods calls; synced is set by the first one and
	// never cleared.
	syncs  uint64
	synced bool

	observer Observer
}

type record struct {
	uid      types.UID
	state    State
	vars     Vars
	fullName string // set for static pods: the slot key
}

// Record is a copy of a pod's lifecycle record.
type Record struct {
	State    State
	Vars     Vars
	FullName string // static pods only
}

// New returns an empty machine that checks every state change against
// looplab's table as looplab answered it when the machine was built (see
// checkLooplab). observer may be nil.
func New(observer Observer) *Machine { return newMachine(observer, events()) }

// newMachine returns an empty machine that runs the looplab table evs.
func newMachine(observer Observer, evs looplab.Events) *Machine {
	m := &Machine{
		lf:       looplab.NewFSM(Absent.String(), evs, nil),
		ctx:      context.Background(),
		index:    map[types.UID]int32{},
		hitAt:    -1,
		observer: observer,
	}
	m.looplabTo = askLooplab(m.lf, m.ctx)
	return m
}

// NewChecked is New in the checked mode: every state change runs looplab's
// full Event (its callback machinery, ~330 ns and 5 allocations) and
// compares the state looplab moved to with the row's. The explorer and
// the engine's tests run it; node agents run New.
func NewChecked(observer Observer) *Machine {
	m := New(observer)
	m.checked = true
	return m
}

// Fire applies ev to the pod: it finds the row of (state, ev) whose
// generated guard holds, fires that row's looplab event, applies the row's
// generated updates and reports the transition. fullName is recorded when
// the event creates the record of a static pod and ignored otherwise. The
// world facts of p (SlotFree, FirstInLine) are computed here.
func (m *Machine) Fire(uid types.UID, fullName string, ev Event, p Params) (Transition, error) {
	at := m.find(uid)
	ok := at >= 0
	rec := record{state: Absent}
	if ok {
		rec = m.recs[at]
	}
	if ev >= numEvents {
		return Transition{}, m.reject(uid, rec.state, ev, &NoTransitionError{Pod: uid, State: rec.state, Event: ev})
	}
	p.SlotFree, p.FirstInLine = m.worldFacts(uid, rec)
	candidates := rowsByPair[rec.state][ev]
	var r *row
	ri := 0
	for _, i := range candidates {
		if rows[i].guard(rec.vars, p) {
			r, ri = &rows[i], int(i)
			break
		}
	}
	if r == nil {
		if len(candidates) == 0 {
			return Transition{}, m.reject(uid, rec.state, ev, &NoTransitionError{Pod: uid, State: rec.state, Event: ev})
		}
		ids := make([]string, len(candidates))
		for k, i := range candidates {
			ids[k] = rows[i].id
		}
		return Transition{}, m.reject(uid, rec.state, ev, &GuardRejectedError{Pod: uid, State: rec.state, Event: ev, Guards: ids})
	}
	if r.from != r.to {
		if err := m.checkLooplab(ri); err != nil {
			return Transition{}, err
		}
	}
	next := record{uid: uid, state: r.to, vars: r.apply(rec.vars, p), fullName: rec.fullName}
	if !ok && next.vars.Static {
		next.fullName = fullName
	}
	m.store(at, rec, next)
	if m.checked { // a slip in the bookkeeping is reported here, before a lookup panics on it
		if err := m.CheckBookkeeping(); err != nil {
			return Transition{}, m.reject(uid, rec.state, ev, fmt.Errorf("fsm: the bookkeeping after row %s of %s: %w", r.id, uid, err))
		}
	}
	t := Transition{Pod: uid, Row: r.id, Ref: r.ref, Event: ev, From: rec.state, To: r.to, Vars: next.vars, Params: p, Effects: r.effects, Ignores: r.ignores, FullName: next.fullName}
	if ev == SyncKnownPods {
		t.Batch = m.syncs
	}
	if m.observer != nil {
		m.observer.Transition(t)
	}
	return t, nil
}

// checkLooplab checks a state-changing row (rows[i]) against looplab's
// table before Fire applies it. Rows that keep the state are not looplab
// transitions: looplab would answer NoTransitionError and do nothing else,
// so Fire applies them without it.
//
// In the checked mode (NewChecked) it runs the row's looplab event from
// the row's source state and compares where looplab went (fireLooplab).
// Otherwise it compares the row's target with the one looplab's own Event
// gave for that row when the machine was built (askLooplab): a looplab FSM's
// table is fixed when it is built, so the answer cannot change, and the
// check costs an array read instead of looplab's callback machinery (~330
// ns and 5 allocations per state change with Event; ~100 ns with
// looplab's locked SetState and Can, which would only re-ask the question
// askLooplab asked). Both modes refuse exactly the same rows: a row whose
// event looplab lacks or sends elsewhere (LooplabError). Measured with
// BenchmarkFire against BenchmarkFireChecked.
func (m *Machine) checkLooplab(i int) error {
	r := &rows[i]
	if m.checked {
		return fireLooplab(m.lf, m.ctx, r)
	}
	switch to := m.looplabTo[i]; {
	case to == numStates:
		return &LooplabError{Row: r.id, Err: errors.New("looplab has no event " + r.id + " from " + r.from.String())}
	case to != r.to:
		return &LooplabError{Row: r.id, Err: errors.New("looplab moved to " + to.String() + ", the table to " + r.to.String())}
	}
	return nil
}

// fireLooplab runs a state-changing row's looplab event from the row's
// source state and checks that looplab moved to the row's target.
func fireLooplab(lf *looplab.FSM, ctx context.Context, r *row) error {
	lf.SetState(r.from.String())
	if err := lf.Event(ctx, r.id); err != nil {
		return &LooplabError{Row: r.id, Err: err}
	}
	if got := lf.Current(); got != r.to.String() {
		return &LooplabError{Row: r.id, Err: errors.New("looplab moved to " + got + ", the table to " + r.to.String())}
	}
	return nil
}

// askLooplab runs, on lf, the looplab event of every state-changing row
// from the row's source state and records the state looplab moved to
// (numStates when looplab refused the event).
func askLooplab(lf *looplab.FSM, ctx context.Context) *[len(rows)]State {
	var to [len(rows)]State
	for i := range rows {
		r := &rows[i]
		to[i] = numStates
		if r.from == r.to {
			continue
		}
		lf.SetState(r.from.String())
		if err := lf.Event(ctx, r.id); err != nil {
			continue
		}
		for s := range State(numStates) {
			if lf.Current() == s.String() {
				to[i] = s
			}
		}
	}
	lf.SetState(Absent.String())
	return &to
}

func (m *Machine) reject(uid types.UID, s State, ev Event, err error) error {
	if m.observer != nil {
		m.observer.Rejected(uid, s, ev, err)
	}
	return err
}

// worldFacts computes SlotFree and FirstInLine for a static pod.
func (m *Machine) worldFacts(uid types.UID, rec record) (slotFree, firstInLine bool) {
	if rec.fullName == "" {
		return true, false
	}
	holder, held := m.slots[rec.fullName]
	w := m.waiting[rec.fullName]
	return !held || holder == uid, len(w) > 0 && w[0] == uid
}

// find returns the position of uid's record in recs, or -1.
func (m *Machine) find(uid types.UID) int32 {
	if m.hitAt >= 0 && m.hitUID == uid {
		return m.hitAt
	}
	at, ok := m.index[uid]
	if !ok {
		return -1
	}
	m.hitUID, m.hitAt = uid, at
	return at
}

// store saves the record after a transition (at is its position, -1 for
// a new one) and keeps slots and waiting true to their definitions.
func (m *Machine) store(at int32, before, after record) {
	uid := after.uid
	switch {
	case after.state.HasRecord() && at >= 0:
		m.recs[at] = after
	case after.state.HasRecord():
		at = int32(len(m.recs))
		m.recs = append(m.recs, after)
		m.index[uid] = at
		m.hitUID, m.hitAt = uid, at
	case at >= 0: // removed: the last record takes its place
		last := int32(len(m.recs) - 1)
		if at != last {
			m.recs[at] = m.recs[last]
			m.index[m.recs[at].uid] = at
		}
		m.recs[last] = record{}
		m.recs = m.recs[:last]
		delete(m.index, uid)
		m.hitUID, m.hitAt = "", -1
	}
	f := after.fullName
	if f == "" {
		return
	}
	holds := after.vars.Static && after.vars.Started && after.state.MayHoldSlot()
	if holder, held := m.slots[f]; holds {
		if m.slots == nil {
			m.slots = map[string]types.UID{}
		}
		m.slots[f] = uid
	} else if held && holder == uid {
		delete(m.slots, f)
	}
	switch wasWaiting, isWaiting := before.state == Waiting, after.state == Waiting; {
	case !wasWaiting && isWaiting:
		if m.waiting == nil {
			m.waiting = map[string][]types.UID{}
		}
		m.waiting[f] = append(m.waiting[f], uid)
	case wasWaiting && !isWaiting:
		w := slices.DeleteFunc(m.waiting[f], func(x types.UID) bool { return x == uid })
		if len(w) == 0 {
			delete(m.waiting, f)
		} else {
			m.waiting[f] = w
		}
	}
}

// SyncKnownPods marks the machine synced and fires SyncKnownPods for every
// record, in UID order, with the parameters params returns for it (Orphan,
// and the grace facts of its last known pod). each, if not nil, sees every
// transition.
func (m *Machine) SyncKnownPods(params func(uid types.UID) Params, each func(Transition)) error {
	m.synced = true
	m.syncs++
	uids := make([]types.UID, 0, len(m.recs))
	for i := range m.recs {
		uids = append(uids, m.recs[i].uid)
	}
	slices.Sort(uids)
	for _, uid := range uids {
		t, err := m.Fire(uid, "", SyncKnownPods, params(uid))
		if err != nil {
			return err
		}
		if each != nil {
			each(t)
		}
	}
	return nil
}

// Get returns a copy of the pod's record; ok is false for a UID without
// one (Absent). It remembers where it found the record (for the next
// lookup), so even Get must not run concurrently with another call.
func (m *Machine) Get(uid types.UID) (r Record, ok bool) {
	at := m.find(uid)
	if at < 0 {
		return Record{State: Absent}, false
	}
	rec := &m.recs[at]
	return Record{State: rec.state, Vars: rec.vars, FullName: rec.fullName}, true
}

// Synced reports whether SyncKnownPods has run.
func (m *Machine) Synced() bool { return m.synced }

// Len is the number of records.
func (m *Machine) Len() int { return len(m.recs) }

// Range calls f for every record, in no particular order, until f returns
// false.
func (m *Machine) Range(f func(uid types.UID, r Record) bool) {
	for i := range m.recs {
		rec := &m.recs[i]
		if !f(rec.uid, Record{State: rec.state, Vars: rec.vars, FullName: rec.fullName}) {
			return
		}
	}
}

// SlotHolder returns the static UID that holds the full name's slot.
func (m *Machine) SlotHolder(fullName string) (types.UID, bool) {
	uid, ok := m.slots[fullName]
	return uid, ok
}

// Waiting returns the static UIDs waiting for the full name, in order.
func (m *Machine) Waiting(fullName string) []types.UID { return slices.Clone(m.waiting[fullName]) }

// Clone returns an independent copy of the machine, for model checkers that
// branch on every input. It copies what transitions produced; it cannot set
// anything. The copy shares m's looplab FSM (building one costs ~15µs) and
// observer, so a machine and its clones must be used from one goroutine.
//
// The records and slots are values, so a slice and map copy copies them
// (maps.Clone copies the table wholesale); only the waiting lists are
// copied one by one.
// The slots and waiting maps exist only once a static pod needed them.
func (m *Machine) Clone() *Machine {
	c := *m
	c.recs = slices.Clone(m.recs)
	c.index = maps.Clone(m.index)
	c.slots = maps.Clone(m.slots)
	if m.waiting != nil {
		c.waiting = make(map[string][]types.UID, len(m.waiting))
		for k, v := range m.waiting {
			c.waiting[k] = slices.Clone(v)
		}
	}
	return &c
}

// CheckBookkeeping verifies the machine's own bookkeeping of its records:
// index maps exactly the UIDs of recs to their positions, the lookup cache
// names a record where it points, and every record has a state with a
// record. The checked mode (NewChecked) runs it after every transition and
// a model checker after every input, so that a slip is reported by name
// before a later lookup panics on it. (The waiting order is a property of
// the lifecycle, Inv40, which both checkers check.)
func (m *Machine) CheckBookkeeping() error {
	if len(m.index) != len(m.recs) {
		return fmt.Errorf("%d records, %d index entries", len(m.recs), len(m.index))
	}
	for i := range m.recs {
		r := &m.recs[i]
		if at, ok := m.index[r.uid]; !ok || at != int32(i) {
			return fmt.Errorf("record %s at %d, index says %d (present %v)", r.uid, i, at, ok)
		}
		if !r.state.HasRecord() {
			return fmt.Errorf("record %s kept in state %s", r.uid, r.state)
		}
	}
	if m.hitAt >= 0 && (int(m.hitAt) >= len(m.recs) || m.recs[m.hitAt].uid != m.hitUID) {
		return fmt.Errorf("the lookup cache points %s at %d, which holds %d records", m.hitUID, m.hitAt, len(m.recs))
	}
	return nil
}
