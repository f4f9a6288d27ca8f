package spec

// Predicate is a named set of states: a fact about a record that follows
// from its state alone (semantics 1.3, derived predicates). The generators
// render each as a State method in Go and as a set in TLA+.
type Predicate struct {
	Name   string
	Doc    string
	States []State
}

// Predicates are the derived facts the engine's queries and the invariants
// read.
var Predicates = []Predicate{
	{Name: "HasRecord", Doc: "the UID has a lifecycle record",
		States: []State{Waiting, Running, TerminationRequested, Terminating, Terminated, Finished}},
	{Name: "TerminationRequested", Doc: "termination was requested (kubelet terminatingAt is set)",
		States: []State{TerminationRequested, Terminating, Terminated, Finished}},
	{Name: "TerminationStarted", Doc: "no new container may start: the worker took the termination, or the record ended without ever starting",
		States: []State{Terminating, Terminated, Finished}},
	{Name: "IsTerminated", Doc: "no container runs and none will (kubelet terminatedAt is set)",
		States: []State{Terminated, Finished}},
	{Name: "IsFinished", Doc: "the worker is done with this incarnation",
		States: []State{Finished}},
	{Name: "MayHoldSlot", Doc: "a started static pod in this state holds its full name's slot",
		States: []State{Running, TerminationRequested, Terminating, Terminated}},
}

// PredicateNamed returns the predicate called name; it panics on a name
// there is none of, which is a mistake in the table itself.
func PredicateNamed(name string) Predicate {
	for _, p := range Predicates {
		if p.Name == name {
			return p
		}
	}
	panic("spec: no predicate " + name)
}

// Holds reports whether s is in the predicate's set.
func (p Predicate) Holds(s State) bool {
	for _, x := range p.States {
		if x == s {
			return true
		}
	}
	return false
}
