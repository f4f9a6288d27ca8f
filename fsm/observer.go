package fsm

import "k8s.io/apimachinery/pkg/types"

// Transition is one fired row, as reported to observers and returned by
// Fire.
type Transition struct {
	Pod     types.UID
	Row     string // the row ID, also the looplab event name
	Ref     string // the row (T1..T25) or section of docs/semantics.md
	Event   Event
	From    State
	To      State
	Vars    Vars   // the record's variables after the row
	Params  Params // the event's parameters, world facts included
	Effects Effect
	// Ignores: the row changes nothing (state, variables and effects), as
	// every housekeeping's SyncKnownPods does for a desired pod.
	Ignores bool
	// FullName is the static pod's full name (empty for other pods).
	FullName string
	// Batch numbers the SyncKnownPods call a SyncKnownPods transition
	// belongs to (1 for the first call); 0 for other events. The rows of
	// one call form one atomic step of the model.
	Batch uint64
}

// Observer receives every transition and every rejected event, in order,
// while the machine's owner holds it. It must not call back into the
// machine.
type Observer interface {
	Transition(t Transition)
	Rejected(pod types.UID, state State, event Event, err error)
}

// Observers fans every call out to several observers, in order.
type Observers []Observer

// Transition passes t to each observer.
func (o Observers) Transition(t Transition) {
	for _, x := range o {
		x.Transition(t)
	}
}

// Rejected passes the rejection to each observer.
func (o Observers) Rejected(pod types.UID, state State, event Event, err error) {
	for _, x := range o {
		x.Rejected(pod, state, event, err)
	}
}
