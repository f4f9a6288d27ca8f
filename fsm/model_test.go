package fsm

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// This test explores the machine under exactly the inputs of
// tla/PodLifecycle.tla's Next with the bounds of tla/MCPodLifecycle.cfg,
// checks the safety invariants of the spec on every state and step, and
// reports the number of distinct states TLC should find.

type modelConfig struct {
	pods           []types.UID
	static         map[types.UID]bool
	graceOverrides []int64
	specGrace      int64
}

const fullName = "static_default" // the one full name the static pods share

// modelState is one state of the spec: every pod's record (Removed kept
// apart from Absent, as the spec does), the waiting order and synced.
type modelState struct {
	recs    []record // indexed like config.pods; state Absent or Removed when there is none
	waiting []types.UID
	synced  bool
}

func (s *modelState) key() string {
	var b strings.Builder
	for _, r := range s.recs {
		v := r.vars
		fmt.Fprintf(&b, "%d%t%t%t%t%t%t%t%d%d%d%t|", r.state, v.Static, v.HasConfig, v.Started, v.Deleted, v.Evicted,
			v.RestartRequested, v.ObservedRuntime, v.Grace, v.Pending, v.InFlight, v.Waiters)
	}
	fmt.Fprint(&b, s.waiting, s.synced)
	return b.String()
}

type modelInput struct {
	pod     int // -1: SyncKnownPods
	ev      Event
	p       Params
	desired []bool
}

func (c *modelConfig) inputs(s *modelState) []modelInput {
	var in []modelInput
	noGrace := Params{GraceOverride: NoGrace}
	for i, uid := range c.pods {
		podGrace := int64(0)
		if s.recs[i].vars.HasConfig {
			podGrace = c.specGrace
		}
		graces := append([]int64{NoGrace}, c.graceOverrides...)
		for _, ev := range []Event{Create, Update, Sync} {
			for _, d := range []bool{false, true} {
				for _, tp := range []bool{false, true} {
					for _, rt := range []bool{false, true} {
						deletionGraces := []int64{NoGrace} // a deletion grace comes only with a deletion timestamp
						if d {
							deletionGraces = graces
						}
						for _, g := range deletionGraces {
							in = append(in, modelInput{pod: i, ev: ev, p: Params{Static: c.static[uid], Deleting: d, TerminalPhase: tp, RuntimeTerminal: rt, GraceOverride: g, SpecGrace: c.specGrace}})
						}
					}
				}
			}
		}
		for _, evict := range []bool{false, true} {
			for _, g := range graces {
				in = append(in, modelInput{pod: i, ev: Kill, p: Params{Static: c.static[uid], Evict: evict, GraceOverride: g, SpecGrace: c.specGrace, Notify: true}})
			}
		}
		in = append(in, modelInput{pod: i, ev: RuntimeKill, p: Params{GraceOverride: 1, SpecGrace: podGrace}})
		for _, ev := range []Event{RuntimeUpdate, Dequeue, SyncPodDone, SyncPodTerminal, SyncPodFailed, TerminatingDone, TerminatingFailed, TerminatedDone, TerminatedFailed, Requeue} {
			in = append(in, modelInput{pod: i, ev: ev, p: noGrace})
		}
	}
	for mask := 0; mask < 1<<len(c.pods); mask++ {
		d := make([]bool, len(c.pods))
		for i := range d {
			d[i] = mask&(1<<i) != 0
		}
		in = append(in, modelInput{pod: -1, ev: SyncKnownPods, desired: d})
	}
	return in
}

// step applies one input to a copy of s through a Machine; ok is false when
// the machine rejects it (the spec has no such step).
func (c *modelConfig) step(m *Machine, s *modelState, in modelInput) (next *modelState, ok bool) {
	m.records, m.slots, m.waiting, m.synced = map[types.UID]record{}, map[string]types.UID{}, map[string][]types.UID{}, s.synced
	for i, uid := range c.pods {
		r := s.recs[i]
		if !r.state.HasRecord() {
			continue
		}
		m.records[uid] = r
		if r.fullName != "" && r.vars.Started && r.state.MayHoldSlot() {
			m.slots[r.fullName] = uid
		}
	}
	if len(s.waiting) > 0 {
		m.waiting[fullName] = slices.Clone(s.waiting)
	}
	next = &modelState{recs: slices.Clone(s.recs)}
	removed := map[types.UID]bool{}
	if in.pod < 0 {
		err := m.SyncKnownPods(func(uid types.UID) Params {
			i := slices.Index(c.pods, uid)
			g := int64(0)
			if s.recs[i].vars.HasConfig {
				g = c.specGrace
			}
			return Params{Orphan: !in.desired[i], GraceOverride: NoGrace, SpecGrace: g}
		}, func(t Transition) {
			if t.To == Removed {
				removed[t.Pod] = true
			}
		})
		if err != nil {
			panic(err)
		}
	} else {
		uid := c.pods[in.pod]
		name := ""
		if c.static[uid] {
			name = fullName
		}
		t, err := m.Fire(uid, name, in.ev, in.p)
		if err != nil {
			return nil, false
		}
		if t.To == Removed {
			removed[uid] = true
		}
	}
	for i, uid := range c.pods {
		if r, ok := m.records[uid]; ok {
			next.recs[i] = r
		} else if removed[uid] {
			next.recs[i] = record{state: Removed}
		} else if s.recs[i].state.HasRecord() {
			panic("record vanished without a transition to Removed")
		}
	}
	next.waiting, next.synced = slices.Clone(m.waiting[fullName]), m.synced
	return next, true
}

// stateInvariant mirrors the spec's state invariants.
func (c *modelConfig) stateInvariant(s *modelState) error {
	holders := 0
	for i, r := range s.recs {
		v, uid := r.vars, c.pods[i]
		known := r.state.HasRecord()
		holds := v.Static && v.Started && r.state.MayHoldSlot()
		if holds {
			holders++
		}
		inWaiting := slices.Contains(s.waiting, uid)
		for _, check := range []struct {
			name string
			ok   bool
		}{
			{"TypeOK", v.Grace >= 0 && v.Grace <= 3 && (known || v == Vars{})},
			{"Inv7", !r.state.TerminationStarted() || v.InFlight != InFlightSyncPod},
			{"Inv8", v.InFlight != InFlightSyncTerminatedPod || r.state == Terminated},
			{"Inv13", v.InFlight == InFlightNone || (known && r.state != Finished)},
			{"Inv18", v.Pending != PendingParked || (r.state == Waiting && v.Static)},
			{"Inv22", r.state != TerminationRequested || v.Grace >= 1},
			{"Inv26", !v.Waiters || r.state == TerminationRequested || r.state == Terminating},
			{"Inv39", !(v.Static && v.InFlight == InFlightSyncPod) || holds},
			{"Inv40", inWaiting == (r.state == Waiting && v.Static)},
			{"Inv41", !(v.Static && !v.Started) || v.InFlight == InFlightNone},
			// Liveness rests on this: such a record would have no Dequeue row.
			{"NoStuckTermination", !(r.state == Terminating && v.HasConfig && v.Static && !v.Started)},
		} {
			if !check.ok {
				return fmt.Errorf("%s violated by %s: %s %+v", check.name, uid, r.state, v)
			}
		}
	}
	if holders > 1 {
		return fmt.Errorf("Inv38 violated: %d slot holders", holders)
	}
	if len(s.waiting) != len(slices.Compact(slices.Clone(s.waiting))) {
		return fmt.Errorf("Inv40 violated: waiting %v", s.waiting)
	}
	return nil
}

// stepProperty mirrors the spec's step properties.
func stepProperty(from, to *modelState, pods []types.UID) error {
	if from.synced && !to.synced {
		return fmt.Errorf("Inv36")
	}
	workType := func(s State) int {
		switch {
		case s.IsTerminated():
			return 2
		case s.TerminationRequested():
			return 1
		}
		return 0
	}
	for i := range pods {
		a, b := from.recs[i], to.recs[i]
		livesOn := a.state.HasRecord() && b.state.HasRecord()
		for _, check := range []struct {
			name string
			ok   bool
		}{
			{"Inv1", !(livesOn && a.state.TerminationRequested()) || b.state.TerminationRequested()},
			{"Inv5", !livesOn || workType(b.state) >= workType(a.state)},
			{"Inv6", !(a.vars.InFlight != InFlightSyncPod && b.vars.InFlight == InFlightSyncPod) || b.state == Running},
			{"Inv9", !(a.vars.InFlight == InFlightSyncTerminatingRuntimePod && b.vars.InFlight == InFlightNone && b.state != a.state) || b.state == Removed},
			{"Inv10", b.state != Running || a.state == Waiting || a.state == Running},
			{"Inv11", !(a.state == Finished && b.state == Finished) || func() bool { x := b.vars; x.RestartRequested = a.vars.RestartRequested; return x == a.vars }()},
			{"Inv23", !(livesOn && a.vars.Grace != 0) || (b.vars.Grace >= 1 && b.vars.Grace <= a.vars.Grace)},
			{"Inv40Order", !(a.vars.Static && a.state == Waiting && b.state == Running) || (len(from.waiting) > 0 && from.waiting[0] == pods[i])},
			{"Inv44", !(a.state.HasRecord() && a.state != Finished && b.state == Removed) || (!a.vars.Started && !a.vars.ObservedRuntime) || a.vars.InFlight == InFlightSyncTerminatingRuntimePod},
		} {
			if !check.ok {
				return fmt.Errorf("%s violated by %s: %s %+v -> %s %+v", check.name, pods[i], a.state, a.vars, b.state, b.vars)
			}
		}
	}
	return nil
}

// TestModelOfTheShippedConfigs explores each tla/MC*.cfg; tla/README.md
// quotes the state counts as what TLC must find.
func TestModelOfTheShippedConfigs(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("explores the whole model; run without -race and -short: go test -run TestModel ./fsm")
	}
	for _, tc := range []struct {
		cfg    string
		static map[types.UID]bool
		states int
	}{
		{"MCPodLifecycle", map[types.UID]bool{"p1": true, "p2": true}, 247790},
		{"MCPodLifecycleMixed", map[types.UID]bool{"p1": true}, 438902},
	} {
		t.Run(tc.cfg, func(t *testing.T) {
			c := &modelConfig{pods: []types.UID{"p1", "p2"}, static: tc.static, graceOverrides: []int64{1}, specGrace: 2}
			n := c.explore(t)
			if n != tc.states {
				t.Errorf("%d distinct states, tla/README.md says %d: update both after a table change", n, tc.states)
			}
		})
	}
}

// explore runs the breadth-first exploration and returns the number of
// distinct states.
func (c *modelConfig) explore(t *testing.T) int {
	start := time.Now()
	m := New(nil)
	init := &modelState{recs: make([]record, len(c.pods))}
	seen := map[string]bool{init.key(): true}
	queue := []*modelState{init}
	transitions := 0
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if err := c.stateInvariant(s); err != nil {
			t.Fatal(err)
		}
		for _, in := range c.inputs(s) {
			next, ok := c.step(m, s, in)
			if !ok {
				continue
			}
			transitions++
			if err := stepProperty(s, next, c.pods); err != nil {
				t.Fatalf("%v (input %s on pod %d)", err, in.ev, in.pod)
			}
			if k := next.key(); !seen[k] {
				seen[k] = true
				queue = append(queue, next)
			}
		}
	}
	t.Logf("%d distinct states, %d transitions, %v", len(seen), transitions, time.Since(start))
	return len(seen)
}
