package container

import "fmt"

// Transition is what one row did to a container's record.
type Transition struct {
	Row      string
	From, To State
	Before   Vars
	After    Vars
	Effects  Effect
}

// Fire applies the row of (s, e) whose guard holds for v and p. A
// decision that no row accepts is refused with an error; every other event
// has exactly one row in every state (spec.Validate proves it).
func Fire(s State, v Vars, e Event, p Params) (Transition, error) {
	if s >= numStates || e >= numEvents {
		return Transition{}, fmt.Errorf("container: no state %d or event %d", s, e)
	}
	for i := range rows {
		r := &rows[i]
		if r.from == s && r.event == e && r.guard(v, p) {
			return Transition{Row: r.id, From: s, To: r.to, Before: v, After: r.apply(v, p), Effects: r.effects}, nil
		}
	}
	return Transition{}, refused[s][e]
}

// refused are Fire's refusals, made once: a plan tries each decision in
// turn and most are refused, so formatting one per refusal cost a sync's
// plan about a third of its time.
var refused = func() (errs [numStates][numEvents]error) {
	for s := range State(numStates) {
		for e := range Event(numEvents) {
			errs[s][e] = fmt.Errorf("container: %s refused in %s", e, s)
		}
	}
	return errs
}()

// Enabled reports whether a row of (s, e) accepts v and p.
func Enabled(s State, v Vars, e Event, p Params) bool {
	_, err := Fire(s, v, e, p)
	return err == nil
}
