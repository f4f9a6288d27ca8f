package fsm

import (
	"errors"
	"slices"
	"testing"

	looplab "github.com/looplab/fsm"
	"k8s.io/apimachinery/pkg/types"
)

// TestLooplabTableIsTheGenerated proves that the dispatch Fire runs is
// looplab's table, both ways: every state-changing row is a looplab event
// from its source state to its target (as looplab's own Event answers it),
// and looplab offers no event from any state that is not such a row.
func TestLooplabTableIsTheGenerated(t *testing.T) {
	m := New(nil)
	want := map[State][]string{}
	for i := range rows {
		r := &rows[i]
		if r.from == r.to {
			if m.looplabTo[i] != numStates {
				t.Errorf("row %s keeps the state but looplab has an event for it", r.id)
			}
			continue
		}
		want[r.from] = append(want[r.from], r.id)
		if got := m.looplabTo[i]; got != r.to {
			t.Errorf("row %s: looplab moves %s to %v, the table to %s", r.id, r.from, got, r.to)
		}
	}
	for s := range State(numStates) {
		m.lf.SetState(s.String())
		got := m.lf.AvailableTransitions()
		slices.Sort(got)
		w := want[s]
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("looplab's events from %s are %v, the table's %v", s, got, w)
		}
	}
}

// TestBothModesRefuseWhatLooplabRefuses builds machines on looplab tables
// that disagree with the generated rows (an event missing, an event that
// goes elsewhere) and checks that the default mode refuses the same
// transitions as the checked mode, with a *LooplabError, and changes
// nothing.
func TestBothModesRefuseWhatLooplabRefuses(t *testing.T) {
	const row = "AbsentCreateAdmit" // Absent -> Waiting, the first row of an ordinary create
	tests := []struct {
		name string
		edit func(looplab.Events) looplab.Events
	}{
		{"event missing", func(evs looplab.Events) looplab.Events {
			return slices.DeleteFunc(evs, func(e looplab.EventDesc) bool { return e.Name == row })
		}},
		{"event goes elsewhere", func(evs looplab.Events) looplab.Events {
			for i := range evs {
				if evs[i].Name == row {
					evs[i].Dst = Running.String()
				}
			}
			return evs
		}},
		{"event from another state", func(evs looplab.Events) looplab.Events {
			for i := range evs {
				if evs[i].Name == row {
					evs[i].Src = []string{Waiting.String()}
				}
			}
			return evs
		}},
	}
	for _, tc := range tests {
		for _, checked := range []bool{false, true} {
			m := newMachine(nil, tc.edit(events()))
			m.checked = checked
			_, err := m.Fire(types.UID("a"), "", Create, plain)
			var le *LooplabError
			if !errors.As(err, &le) || le.Row != row {
				t.Errorf("%s, checked=%v: Fire = %v, want a LooplabError for %s", tc.name, checked, err, row)
			}
			if _, ok := m.Get("a"); ok {
				t.Errorf("%s, checked=%v: the refused transition created a record", tc.name, checked)
			}
			// A row looplab agrees with still fires.
			if _, err := m.Fire(types.UID("b"), "", Kill, Params{GraceOverride: NoGrace}); err != nil {
				t.Errorf("%s, checked=%v: an unaffected row was refused: %v", tc.name, checked, err)
			}
		}
	}
}
