// Package mutants lists one way to break podlife for each property of
// spec.Properties, so that the mutation tests can show that every property
// can fail: the explorer (package explore) and TLC (package gen's tests,
// with TLA2TOOLS_JAR) must each report the property on the broken engine
// or model. A mutant breaks the table (both checkers see the same broken
// rows), the engine's source code (with the matching change to the
// hand-written TLA+), or the fairness both assume.
package mutants

import (
	"fmt"

	"github.com/podlife/podlife/spec"
)

// Mutant is one broken variant of podlife.
type Mutant struct {
	// Property is the property that must report it.
	Property string
	// Config is the shipped configuration (tla/<Config>.cfg) to check on.
	Config string
	// What says what is broken.
	What string
	// Table, if set, breaks rows of the table.
	Table func(rows []spec.Row) []spec.Row
	// Source lists edits of the engine's Go source; TLA lists the matching
	// edits of tla/PodLifecycle.tla.
	Source, TLA []Edit
	// Fairness names the fairness condition to drop: the event whose
	// class the explorer drops ("Success": the strong fairness of both
	// successes), and so the conjunct of tla/PodLifecycle.tla's Fairness
	// that TLC drops (see the map Fairness).
	Fairness string
}

// Edit replaces Old by New, once, in the file Path (relative to the
// repository root).
type Edit struct{ Path, Old, New string }

// Apply edits src; it fails when Old is not there, so a mutant cannot go
// stale silently.
func (e Edit) Apply(src string) (string, error) {
	for i := 0; i+len(e.Old) <= len(src); i++ {
		if src[i:i+len(e.Old)] == e.Old {
			return src[:i] + e.New + src[i+len(e.Old):], nil
		}
	}
	return "", fmt.Errorf("%s: %q not found; update internal/mutants", e.Path, e.Old)
}

// row edits the row id of a copy of the table.
func row(id string, edit func(r *spec.Row)) func([]spec.Row) []spec.Row {
	return func(rows []spec.Row) []spec.Row {
		out := make([]spec.Row, len(rows))
		copy(out, rows)
		for i := range out {
			if out[i].ID == id {
				out[i].Set = append([]spec.Assign(nil), out[i].Set...)
				edit(&out[i])
				return out
			}
		}
		panic("mutants: no row " + id)
	}
}

// set writes v := e in r, replacing an existing write of v.
func set(r *spec.Row, v *spec.Var, e spec.Expr) {
	for i, a := range r.Set {
		if a.Var == v {
			r.Set[i].Value = e
			return
		}
	}
	r.Set = append(r.Set, spec.Assign{Var: v, Value: e})
}

// drop removes r's write of v.
func drop(r *spec.Row, v *spec.Var) {
	for i, a := range r.Set {
		if a.Var == v {
			r.Set = append(r.Set[:i], r.Set[i+1:]...)
			return
		}
	}
}

func inFlight(name string) spec.Expr { return spec.E(spec.InFlightDomain, name) }

const (
	corePath   = "worker/core.go"
	timersPath = "worker/timers.go"
	fsmPath    = "fsm/machine.go"
	modelPath  = "tla/PodLifecycle.tla"
)

// All lists the mutants, one or more per property.
var All = []Mutant{
	{Property: "TypeOK", Config: "MCOnePod", What: "a shorter grace period is written as 4 s, outside the model's 0..3",
		Table: row("TerminatingKillShorten", func(r *spec.Row) { set(r, spec.Grace, spec.N(4)) })},
	{Property: "Inv7", Config: "MCOnePod", What: "a terminating pod's retry runs SyncPod",
		Table: row("TerminatingDequeueRetry", func(r *spec.Row) { set(r, spec.InFlight, inFlight("SyncPod")) })},
	{Property: "Inv8", Config: "MCOnePod", What: "a running pod's resync runs SyncTerminatedPod",
		Table: row("RunningDequeueSync", func(r *spec.Row) { set(r, spec.InFlight, inFlight("SyncTerminatedPod")) })},
	{Property: "Inv13", Config: "MCOnePod", What: "the end of cleanup leaves SyncTerminatedPod in flight",
		Table: row("TerminatedTerminatedDone", func(r *spec.Row) { drop(r, spec.InFlight) })},
	{Property: "Inv18", Config: "MCOnePod", What: "a running pod's successful sync parks its next update",
		Table: row("RunningSyncPodDone", func(r *spec.Row) { set(r, spec.Pending, spec.E(spec.PendingDomain, "Parked")) })},
	{Property: "Inv22", Config: "MCOnePod", What: "a kill of a running pod sets no grace period",
		Table: row("RunningKillTerminate", func(r *spec.Row) { set(r, spec.Grace, spec.N(0)) })},
	{Property: "Inv26", Config: "MCOnePod", What: "the end of SyncTerminatingPod keeps the kill waiters",
		Table: row("TerminatingTerminatingDone", func(r *spec.Row) { drop(r, spec.Waiters); r.Effects &^= spec.CloseWaiters })},
	{Property: "Inv38", Config: "MCLiveness", What: "a static pod starts without its full name's slot being free",
		Table: row("WaitingDequeueStart", func(r *spec.Row) {
			r.Guard = spec.And(spec.Is(spec.Pending, "Queued"), spec.Is(spec.InFlight, "None"), spec.Or(spec.Not(spec.V(spec.Static)), spec.P(spec.PFirstInLine)))
		})},
	{Property: "Inv39", Config: "MCLiveness", What: "a parked static pod runs SyncPod",
		Table: row("WaitingDequeuePark", func(r *spec.Row) {
			set(r, spec.InFlight, inFlight("SyncPod"))
			r.Effects = spec.Start
		})},
	{Property: "Inv40", Config: "MCOneStaticPod", What: "a static pod that starts waiting is not put in the waiting order",
		Source: []Edit{{fsmPath, "m.waiting[f] = append(m.waiting[f], uid)", "_ = uid"}},
		TLA:    []Edit{{modelPath, "/\\ r2.state = \"Waiting\" -> Append(waiting, p)", "/\\ r2.state = \"Waiting\" -> waiting"}}},
	{Property: "Inv41", Config: "MCOneStaticPod", What: "a static pod killed before it started runs SyncTerminatingPod",
		Table: row("TerminationRequestedDequeueNeverStart", func(r *spec.Row) {
			r.To, r.Effects = spec.Terminating, spec.Start
			set(r, spec.InFlight, inFlight("SyncTerminatingPod"))
			drop(r, spec.Waiters)
		})},
	{Property: "WaitersAreOpenChannels", Config: "MCOnePod", What: "the core never closes a kill waiter's channel",
		Source: []Edit{{corePath, "c.emit(Effect{Kind: CloseChannel, UID: uid, Waiter: id})", "_ = id"}},
		TLA:    []Edit{{modelPath, `channels |-> IF ends \/ "CloseWaiters" \in s.eff THEN 0`, `channels |-> IF FALSE THEN 0`}}},
	{Property: "KillsComplete", Config: "MCOnePod", What: "the core never closes a kill waiter's channel",
		Source: []Edit{{corePath, "c.emit(Effect{Kind: CloseChannel, UID: uid, Waiter: id})", "_ = id"}},
		TLA:    []Edit{{modelPath, `channels |-> IF ends \/ "CloseWaiters" \in s.eff THEN 0`, `channels |-> IF FALSE THEN 0`}}},
	{Property: "NoLostWakeup", Config: "MCOnePod", What: "the core never starts a pod's worker loop",
		Source: []Edit{{corePath, "c.emit(Effect{Kind: RunLoop, UID: uid})", "c.unendedLoops[uid]--"}},
		TLA:    []Edit{{modelPath, `[loop     |-> loop[p] \/ (~ends /\ queued /\ r2.inFlight = "None"),`, `[loop     |-> loop[p],`}}},
	{Property: "TimerOnlyWhileLive", Config: "MCOnePod", What: "the end of a record leaves its timer armed",
		Source: []Edit{{corePath, "c.emit(Effect{Kind: StopTimer, UID: uid})", ""}},
		TLA:    []Edit{{modelPath, "timer    |-> IF ends THEN FALSE", "timer    |-> IF FALSE THEN FALSE"}}},

	{Property: "Inv1", Config: "MCOnePod", What: "a SyncPod that returns after termination was requested brings the pod back to Running",
		Table: row("TerminationRequestedSyncPodDone", func(r *spec.Row) { r.To = spec.Running })},
	{Property: "Inv5", Config: "MCOnePod", What: "cleanup goes back to terminating",
		Table: row("TerminatedDequeueCleanup", func(r *spec.Row) { r.To = spec.Terminating })},
	{Property: "Inv6", Config: "MCOnePod", What: "the worker takes the termination by running SyncPod",
		Table: row("TerminationRequestedDequeueTerminate", func(r *spec.Row) { set(r, spec.InFlight, inFlight("SyncPod")) })},
	{Property: "Inv9", Config: "MCOnePod", What: "a runtime-only pod whose termination succeeded is kept as Terminated",
		Table: row("TerminatingTerminatingDoneRuntime", func(r *spec.Row) {
			r.To, r.Reset = spec.Terminated, false
			set(r, spec.InFlight, inFlight("None"))
			set(r, spec.Waiters, spec.B(false))
		})},
	{Property: "Inv10", Config: "MCOnePod", What: "a failed cleanup starts the pod again",
		Table: row("TerminatedTerminatedFailed", func(r *spec.Row) { r.To = spec.Running })},
	{Property: "Inv11", Config: "MCOnePod", What: "a finished record takes an update's deletion mark",
		Table: row("FinishedUpdateIgnored", func(r *spec.Row) { set(r, spec.Deleted, spec.B(true)) })},
	{Property: "Inv23", Config: "MCOnePod", What: "a kill that asks for no shorter grace period sets 3 s",
		Table: row("TerminatingKill", func(r *spec.Row) { set(r, spec.Grace, spec.N(3)) })},
	{Property: "Inv36", Config: "MCOnePod", What: "SyncKnownPods toggles synced",
		Source: []Edit{{fsmPath, "m.synced = true", "m.synced = !m.synced"}},
		TLA:    []Edit{{modelPath, "/\\ synced' = TRUE", "/\\ synced' = ~synced"}}},
	{Property: "Inv40Order", Config: "MCLiveness", What: "a static pod may start ahead of the first in line",
		Table: row("WaitingDequeueStart", func(r *spec.Row) {
			r.Guard = spec.And(spec.Is(spec.Pending, "Queued"), spec.Is(spec.InFlight, "None"), spec.Or(spec.Not(spec.V(spec.Static)), spec.P(spec.PSlotFree)))
		})},
	{Property: "Inv44", Config: "MCOnePod", What: "SyncKnownPods removes an orphan that ran without terminating it",
		Table: func(rows []spec.Row) []spec.Row {
			rows = row("RunningSyncKnownPodsRemove", func(r *spec.Row) { r.Guard = spec.P(spec.POrphan) })(rows)
			return row("RunningSyncKnownPodsTerminate", func(r *spec.Row) { r.Guard = spec.B(false) })(rows)
		}},
	{Property: "KillsReleasedOnTermination", Config: "MCOnePod", What: "a second kill releases the first kill's waiters before the pod terminated",
		Table: row("TerminationRequestedKill", func(r *spec.Row) { r.Effects |= spec.CloseWaiters })},

	// The explorer's own properties (spec.Var.Explorer): tla/PodLifecycle.tla
	// has no variable for what they read, so they have no TLA edit. A stale
	// timer needs a second pod: one pod's next incarnation passes through
	// states the explorer has seen, so it does not go on from them.
	{Property: "SyncCancelledFirst", Config: "MCOnePod", What: "a row that cancels leaves the sync in flight's context uncancelled",
		Source: []Edit{{corePath, "if e.Has(fsm.Cancel) && pd.syncing {", "if e.Has(fsm.Cancel) && pd.syncing && false {"}}},
	{Property: "NoStaleTimer", Config: "MCLiveness", What: "the timer queue hands out timers that were stopped",
		Source: []Edit{{timersPath, "		if it.dead {\n			q.dead--", "		if it.dead && false {\n			q.dead--"}}},
	{Property: "SyncGraceWithinAsked", Config: "MCGrace", What: "SyncTerminatingPod is handed a second more than the record's grace period",
		Source: []Edit{{corePath, "if g := t.Vars.Grace; g > 0 {", "if g := t.Vars.Grace + 1; g > 0 {"}}},

	{Property: "TerminationCompletes", Config: "MCOnePod", What: "a failing SyncTerminatingPod need not ever succeed",
		Fairness: "Success"},
	{Property: "DesiredPodsStart", Config: "MCOnePod", What: "a pod's worker loop need not ask for work",
		Fairness: "Dequeue"},
	{Property: "StaticPodsStart", Config: "MCLiveness", What: "an armed timer need not fire",
		Fairness: "Requeue"},
}

// Fairness lists, per event a mutant may name, the conjunct of
// tla/PodLifecycle.tla's Fairness that covers it.
var Fairness = map[string]string{
	"Success": `/\ \A ev \in SuccessEvents : SF_vars(SyncReturns(p, ev))`,
	"Dequeue": `/\ WF_vars(LoopNext(p))`,
	"Requeue": `/\ WF_vars(TimerFires(p))`,
}
