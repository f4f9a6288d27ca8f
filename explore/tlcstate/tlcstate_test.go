package tlcstate

import (
	"strings"
	"testing"

	"github.com/podlife/podlife/explore/tlavalue"
)

// TestDumpComparison runs the comparison on a small hand-made pair: a TLC
// dump (fields and entries in TLC's order, values over several lines) and
// an explorer dump of the same states but one.
func TestDumpComparison(t *testing.T) {
	tlc := `State 1:
/\ rec = [p1 |-> [state |-> "Absent", grace |-> 0]]
/\ synced = FALSE
/\ waiting = <<>>

State 2:
/\ rec = [ p1 |->
      [ state |-> "Waiting",
        grace |-> 0 ] ]
/\ synced = FALSE
/\ waiting = <<"p1">>

State 3:
/\ rec = ("p1" :> [state |-> "Running", grace |-> 0])
/\ synced = TRUE
/\ waiting = <<>>
`
	// The same states but one, with rec as a function over strings, as
	// older explorer dumps wrote it: the same value as TLC's record.
	explorer := `State 1:
/\ synced = FALSE /\ waiting = <<"p1">> /\ rec = ("p1" :> [grace |-> 0, state |-> "Waiting"])

State 2:
/\ rec = [p1 |-> [grace |-> 0, state |-> "Absent"]] /\ synced = FALSE /\ waiting = <<>>

State 3:
/\ rec = ("p1" :> [grace |-> 0, state |-> "Removed"]) /\ synced = TRUE /\ waiting = <<>>
`
	a, err := Read(strings.NewReader(tlc))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Read(strings.NewReader(explorer))
	if err != nil {
		t.Fatal(err)
	}
	onlyA, onlyB, na, nb := Diff(a, b, 5)
	if na != 3 || nb != 3 {
		t.Fatalf("sizes %d and %d, want 3 and 3", na, nb)
	}
	if len(onlyA) != 1 || !strings.Contains(onlyA[0], `"Running"`) || len(onlyB) != 1 || !strings.Contains(onlyB[0], `"Removed"`) {
		t.Fatalf("only in TLC: %v; only in the explorer: %v", onlyA, onlyB)
	}
	var out strings.Builder
	if err := WriteDump(&out, b); err != nil {
		t.Fatal(err)
	}
	again, err := Read(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if x, y, _, _ := Diff(b, again, 1); len(x)+len(y) != 0 {
		t.Fatalf("WriteDump does not read back: %v %v", x, y)
	}
	// WriteDump writes what TLC writes: records, one variable per line.
	if strings.Contains(out.String(), ":>") || !strings.Contains(out.String(), "State 1:\n/\\ rec = [p1 |-> [grace |-> 0, state |-> \"Absent\"]]\n/\\ synced = FALSE\n/\\ waiting = <<>>\n\n") {
		t.Fatalf("WriteDump wrote\n%s", out.String())
	}
}

func TestReadStatesSkipsStuttering(t *testing.T) {
	text := "Error: Temporal properties were violated.\nState 1: <Initial predicate>\n/\\ x = 1\n\nState 2: Stuttering\n\nBack to state 1: <Next>\n"
	states, err := Read(strings.NewReader(text))
	if err != nil || len(states) != 1 || states[0]["x"].Int != 1 {
		t.Fatalf("Read = %v, %v; want the one state x = 1", states, err)
	}
}

// States compare by TLA+'s equality of their values: a function over
// strings equals the record with the same entries, the empty function <<>>.
func TestStateEqual(t *testing.T) {
	str := func(s string) tlavalue.Value { return tlavalue.Value{Kind: tlavalue.StringValue, Str: s} }
	num := func(n int64) tlavalue.Value { return tlavalue.Value{Kind: tlavalue.IntValue, Int: n} }
	fn := tlavalue.Value{Kind: tlavalue.FuncValue, Fields: []tlavalue.Field{{Key: str("p2"), Value: num(2)}, {Key: str("p1"), Value: num(1)}}}
	rec := tlavalue.Value{Kind: tlavalue.RecordValue, Fields: []tlavalue.Field{{Key: str("p1"), Value: num(1)}, {Key: str("p2"), Value: num(2)}}}
	a := State{"rec": fn, "waiting": tlavalue.Value{Kind: tlavalue.SeqValue}}
	b := State{"waiting": tlavalue.Value{Kind: tlavalue.FuncValue}, "rec": rec}
	if !a.Equal(b) {
		t.Errorf("states %s and %s differ", a.Canonical(), b.Canonical())
	}
	if x, y, na, nb := Diff([]State{a}, []State{b}, 1); len(x)+len(y) != 0 || na != 1 || nb != 1 {
		t.Errorf("Diff: %v %v %d %d", x, y, na, nb)
	}
}
