package explore

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/podlife/podlife/fsm"
)

var discardLogger = slog.New(slog.DiscardHandler)

// propertyKind mirrors spec.PropertyKind in the generated table.
type propertyKind uint8

const (
	invariant propertyKind = iota
	stepProperty
	leadsTo
)

// property is one of spec.Properties, generated as Go
// (zz_generated.properties.go).
type property struct {
	name  string
	kind  propertyKind
	from  func(a, b *podView) bool // leadsTo only
	holds func(a, b *podView) bool
	// explorer: the property reads the explorer's own shell variables
	// (spec.Var.Explorer), which the state key does not hold; it is
	// checked on every input the explorer applies (world.checkEffects).
	explorer bool
}

// podView is what a property reads of one pod in one state: its record,
// its shell variables, and the world facts (spec.World) that depend on the
// other pods or the configuration.
type podView struct {
	State                                                                           fsm.State
	Static, HasConfig, Started, Deleted, Evicted, RestartRequested, ObservedRuntime bool
	Grace                                                                           int
	Pending                                                                         fsm.Pending
	InFlight                                                                        fsm.InFlight
	Waiters, Loop, Timer                                                            bool
	Channels                                                                        int
	// The explorer's own shell variables (spec.Var.Explorer): set only by
	// world.checkEffects.
	CancelOwed, StaleTimer bool
	SyncGrace, AskedGrace  int

	FirstInWaiting bool
	WaitingCount   int
	SlotHolders    int
	StaticPod      bool
	Synced         bool
}

// pick is the generated properties' if-then-else.
func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// views returns the view of every pod of a snapshot.
func (w *world) views(s *snapshot) []podView { return w.viewsInto(nil, s) }

// viewsInto is views into dst's array (the explorer reuses one per lane).
func (w *world) viewsInto(dst []podView, s *snapshot) []podView {
	holders := 0
	for _, p := range s.pods {
		if p.Vars.Static && p.Vars.Started && p.State.MayHoldSlot() {
			holders++
		}
	}
	out := slices.Grow(dst[:0], len(s.pods))[:len(s.pods)]
	for i, p := range s.pods {
		v := p.Vars
		out[i] = podView{
			State: p.State, Static: v.Static, HasConfig: v.HasConfig, Started: v.Started, Deleted: v.Deleted,
			Evicted: v.Evicted, RestartRequested: v.RestartRequested, ObservedRuntime: v.ObservedRuntime,
			Grace: int(v.Grace), Pending: v.Pending, InFlight: v.InFlight, Waiters: v.Waiters,
			Loop: p.Loop, Timer: p.Timer, Channels: p.Channels,
			FirstInWaiting: len(s.waiting) > 0 && s.waiting[0] == i,
			WaitingCount:   countOf(s.waiting, i),
			SlotHolders:    holders, StaticPod: w.cfg.isStatic(i), Synced: s.synced,
		}
	}
	return out
}

func countOf(xs []int, x int) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// stateInvariants checks the configuration's invariants in a state.
func (w *world) stateInvariants(s *snapshot) error { return w.invariantsOn(w.views(s), s) }

// invariantsOn is stateInvariants on the snapshot's views vs.
func (w *world) invariantsOn(vs []podView, s *snapshot) error {
	for _, p := range w.properties {
		if p.kind != invariant {
			continue
		}
		for i := range vs {
			if !p.holds(&vs[i], nil) {
				return fmt.Errorf("%s violated by %s: %s", p.name, w.cfg.Pods[i], s)
			}
		}
	}
	return nil
}

// stepProperties checks the configuration's step properties on a step.
func (w *world) stepProperties(from, to *snapshot) error {
	return w.stepPropertiesOn(w.views(from), w.views(to), from, to)
}

// stepPropertiesOn is stepProperties on the snapshots' views a and b.
func (w *world) stepPropertiesOn(a, b []podView, from, to *snapshot) error {
	for _, p := range w.properties {
		if p.kind != stepProperty {
			continue
		}
		for i := range a {
			if !p.holds(&a[i], &b[i]) {
				return fmt.Errorf("%s violated by %s:\n  before: %s\n  after:  %s", p.name, w.cfg.Pods[i], from, to)
			}
		}
	}
	return nil
}

// propertyName is the property an error from the checks names first.
func propertyName(err error) string {
	var name string
	fmt.Sscanf(err.Error(), "%s", &name)
	if i := slices.Index([]byte(name), ':'); i >= 0 {
		name = name[:i]
	}
	return name
}
