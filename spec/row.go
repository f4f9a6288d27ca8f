package spec

import (
	"slices"
	"strings"
)

// Effect is work the engine must do when a row fires, beyond changing the
// record. Effects are a set (bit mask).
type Effect uint16

const (
	// Start: launch the sync function the row put in flight.
	Start Effect = 1 << iota
	// Cancel: cancel the context of the sync in flight (termination became
	// requested, or the grace period shrank).
	Cancel
	// KeepNotify: keep the update's completion channel and status function
	// until the terminating sync succeeds. Without it, the engine closes the
	// channel at once: podlife never leaves one open.
	KeepNotify
	// CloseWaiters: close every kept completion channel.
	CloseWaiters
	// Resync: with nothing pending, run again after the resync interval.
	Resync
	// Backoff: with nothing pending, retry after the back-off period.
	Backoff
	// Exit: the pod's worker is done; drop its timer and context.
	Exit
	// TakeUpdate: the update (an UpdatePod event) replaces the pending one.
	TakeUpdate

	numEffects = iota
)

var effectNames = [numEffects]string{"Start", "Cancel", "KeepNotify", "CloseWaiters", "Resync", "Backoff", "Exit", "TakeUpdate"}

// EffectNames lists the effect names in bit order.
func EffectNames() []string { return effectNames[:] }

// Has reports whether every effect of f is in e.
func (e Effect) Has(f Effect) bool { return e&f == f }

func (e Effect) String() string {
	var names []string
	for i, n := range effectNames {
		if e&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, "|")
}

// Assign writes Value into Var.
type Assign struct {
	Var   *Var
	Value Expr
}

// Row is one transition of the table.
type Row struct {
	// ID names the row uniquely: Ref.From.Event plus a suffix when one
	// (state, event) pair has several rows. It is the looplab event name.
	ID string
	// Ref is the row (T1..T25) or section of docs/semantics.md this row
	// implements.
	Ref   string
	From  State
	Event Event
	// Guard must hold for the row to fire; rows of the same (From, Event)
	// have disjoint guards.
	Guard Expr
	To    State
	// Set lists the variables the row writes; the others keep their values.
	Set []Assign
	// Reset: the record is deleted; every variable returns to zero.
	Reset   bool
	Effects Effect
	Doc     string
}

// Ignores reports whether the row changes nothing: same state, no writes,
// no effects.
func (r *Row) Ignores() bool {
	return r.From == r.To && len(r.Set) == 0 && !r.Reset && r.Effects == 0
}

// Apply returns the variables after the row fires in env.
func (r *Row) Apply(env *Env) []int { return r.ApplyIn(PodSchema, env) }

// ApplyIn returns the variables of a record of sc's table after the row
// fires in env; a reset record has every variable at zero.
func (r *Row) ApplyIn(sc *Schema, env *Env) []int {
	out := make([]int, len(sc.Vars))
	if !r.Reset {
		copy(out, env.Vars)
	}
	for _, a := range r.Set {
		out[VarIndex(a.Var)] = a.Value.Eval(env)
	}
	return out
}

// RowIndex is the position of the row called id in rows, or -1.
func RowIndex(rows []Row, id string) int {
	return slices.IndexFunc(rows, func(r Row) bool { return r.ID == id })
}
