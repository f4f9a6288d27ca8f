package explore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/podlife/podlife/explore/tlcstate"
	"github.com/podlife/podlife/fsm"
)

// tlcTrace renders the states a behaviour passes through as TLC prints an
// error trace.
func tlcTrace(t *testing.T, cfg Config, inputs []Input) (string, []string) {
	t.Helper()
	w := newWorld(cfg)
	sm := w.newSim(nil)
	s := w.project(sm)
	var b strings.Builder
	var canon []string
	emit := func(i int, s *snapshot) {
		st := w.spec(s)
		canon = append(canon, st.Canonical())
		fmt.Fprintf(&b, "State %d: <Next line 1, col 1 to line 2, col 2 of module PodLifecycle>\n", i)
		for _, v := range []string{"channels", "loop", "rec", "synced", "timer", "waiting"} {
			fmt.Fprintf(&b, "/\\ %s = %s\n", v, st[v].Canonical())
		}
		b.WriteString("\n")
	}
	emit(1, &s)
	for i, in := range inputs {
		if _, err := w.apply(sm, in); err != nil {
			t.Fatal(err)
		}
		next := w.project(sm)
		emit(i+2, &next)
		s = next
	}
	return "Error: Invariant Inv38 is violated.\nError: The behavior up to this point is:\n" + b.String() + "\n21 states generated\n", canon
}

func TestFromTLCRoundTrip(t *testing.T) {
	cfg := Shipped[0]
	none := int64(fsm.NoGrace)
	behaviour := []Input{
		{Pod: 0, Event: "Create", Grace: none},
		{Pod: 1, Event: "Create", Grace: none},
		{Pod: 1, Event: "Dequeue", Grace: none}, // parks: p1 is first in line
		{Pod: 0, Event: "Dequeue", Grace: none},
		{Pod: 0, Event: "Kill", Evict: true, Grace: 1},
		{Pod: 0, Event: "SyncPodDone", Grace: none},
		{Pod: -1, Event: "SyncKnownPods", Grace: none, Desired: []int{1}},
	}
	text, want := tlcTrace(t, cfg, behaviour)
	states, err := tlcstate.Read(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := FromTLC(cfg, states)
	if err != nil {
		t.Fatal(err)
	}
	_, got := tlcTrace(t, cfg, inputs)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the converted inputs %v pass through other states", inputs)
	}
	if err := Replay(cfg, inputs); err != nil {
		t.Fatal(err)
	}
	// A TLC step the engine cannot take: p1 jumps from Waiting to Finished.
	bad := strings.Replace(text, "State 3:", "State 3:", 1)
	bad = strings.Replace(bad, `p1 |-> [deleted |-> FALSE, evicted |-> FALSE, grace |-> 0, hasConfig |-> TRUE, inFlight |-> "None", observedRuntime |-> FALSE, pending |-> "Queued", restartRequested |-> FALSE, started |-> FALSE, state |-> "Waiting"`,
		`p1 |-> [deleted |-> FALSE, evicted |-> FALSE, grace |-> 0, hasConfig |-> TRUE, inFlight |-> "None", observedRuntime |-> FALSE, pending |-> "Queued", restartRequested |-> FALSE, started |-> FALSE, state |-> "Finished"`, 1)
	badStates, err := tlcstate.Read(strings.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromTLC(cfg, badStates); err == nil || !strings.Contains(err.Error(), "TLC state 2 has no engine step") {
		t.Fatalf("an impossible TLC step was accepted: %v", err)
	}
}
