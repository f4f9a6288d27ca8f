package explore

import (
	"strings"
	"testing"
)

func TestParseValueCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`TRUE`, `TRUE`},
		{` -1 `, `-1`},
		{`"a\"b"`, `"a\"b"`},
		{`<<>>`, `<<>>`},
		{`<<"p1", "p2">>`, `<<"p1", "p2">>`},
		{`[state |-> "Absent", grace |-> 0]`, `[grace |-> 0, state |-> "Absent"]`},
		// A function over strings is a record; TLC prints it as one.
		{`("p2" :> [a |-> 1] @@ "p1" :> [a |-> 2])`, `[p1 |-> [a |-> 2], p2 |-> [a |-> 1]]`},
		{"(\"p1\" :>\n   [ b |-> FALSE,\n     a |-> <<1, 2>> ])", `[p1 |-> [a |-> <<1, 2>>, b |-> FALSE]]`},
		{"[ p1 |->\n      [ static |-> FALSE,\n        state |-> \"Absent\" ] ]", `[p1 |-> [state |-> "Absent", static |-> FALSE]]`},
		// Keys that are not field names, or not all strings, stay a function.
		{`("a b" :> 1 @@ "c" :> 2)`, `("a b" :> 1 @@ "c" :> 2)`},
		{`(2 :> 2 @@ "p1" :> 1)`, `("p1" :> 1 @@ 2 :> 2)`},
		{`(0 :> "a" @@ 1 :> "b")`, `(0 :> "a" @@ 1 :> "b")`},
		// A function over 1..n is a sequence, an empty one is <<>>.
		{`(2 :> "b" @@ 1 :> "a")`, `<<"a", "b">>`},
		{`[]`, `<<>>`},
		// Sets: sorted, without duplicates.
		{`{"b", "a", "b"}`, `{"a", "b"}`},
		{`{}`, `{}`},
		{`{[x |-> 1], ("x" :> 1)}`, `{[x |-> 1]}`},
	}
	for _, tt := range tests {
		v, err := ParseValue(tt.in)
		if err != nil {
			t.Errorf("ParseValue(%q): %v", tt.in, err)
			continue
		}
		if got := v.Canonical(); got != tt.want {
			t.Errorf("ParseValue(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{`[a |-> ]`, `<<1 2>>`, `("p1" :> 1`, `"open`, `[a = 1]`, `1 2`, `{1 2}`, `{1,`} {
		if _, err := ParseValue(bad); err == nil {
			t.Errorf("ParseValue(%q) succeeded", bad)
		}
	}
}

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
	a, err := ReadStates(strings.NewReader(tlc))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadStates(strings.NewReader(explorer))
	if err != nil {
		t.Fatal(err)
	}
	onlyA, onlyB, na, nb := DiffStates(a, b, 5)
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
	again, err := ReadStates(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if x, y, _, _ := DiffStates(b, again, 1); len(x)+len(y) != 0 {
		t.Fatalf("WriteDump does not read back: %v %v", x, y)
	}
	// WriteDump writes what TLC writes: records, one variable per line.
	if strings.Contains(out.String(), ":>") || !strings.Contains(out.String(), "State 1:\n/\\ rec = [p1 |-> [grace |-> 0, state |-> \"Absent\"]]\n/\\ synced = FALSE\n/\\ waiting = <<>>\n\n") {
		t.Fatalf("WriteDump wrote\n%s", out.String())
	}
}

func TestReadStatesSkipsStuttering(t *testing.T) {
	text := "Error: Temporal properties were violated.\nState 1: <Initial predicate>\n/\\ x = 1\n\nState 2: Stuttering\n\nBack to state 1: <Next>\n"
	states, err := ReadStates(strings.NewReader(text))
	if err != nil || len(states) != 1 || states[0]["x"].Int != 1 {
		t.Fatalf("ReadStates = %v, %v; want the one state x = 1", states, err)
	}
}

func TestValueEqual(t *testing.T) {
	str := func(s string) Value { return Value{Kind: StringValue, Str: s} }
	num := func(n int64) Value { return Value{Kind: IntValue, Int: n} }
	fn := Value{Kind: FuncValue, Fields: []Field{{str("p2"), num(2)}, {str("p1"), num(1)}}}
	rec := Value{Kind: RecordValue, Fields: []Field{{str("p1"), num(1)}, {str("p2"), num(2)}}}
	if !fn.Equal(rec) || fn.Canonical() != "[p1 |-> 1, p2 |-> 2]" {
		t.Errorf("a function over strings %s and the record %s differ", fn.Canonical(), rec.Canonical())
	}
	seq := Value{Kind: SeqValue, Elems: []Value{str("a"), str("b")}}
	fn12 := Value{Kind: FuncValue, Fields: []Field{{num(2), str("b")}, {num(1), str("a")}}}
	if !seq.Equal(fn12) {
		t.Errorf("the function %s and the sequence %s differ", fn12.Canonical(), seq.Canonical())
	}
	if empty := (Value{Kind: FuncValue}); !empty.Equal(Value{Kind: SeqValue}) {
		t.Errorf("the empty function %s is not <<>>", empty.Canonical())
	}
	if other := (Value{Kind: RecordValue, Fields: []Field{{str("p1"), num(1)}, {str("p2"), num(3)}}}); fn.Equal(other) {
		t.Errorf("%s equals %s", fn.Canonical(), other.Canonical())
	}
	a := State{"rec": fn, "waiting": Value{Kind: SeqValue}}
	b := State{"waiting": Value{Kind: FuncValue}, "rec": rec}
	if !a.Equal(b) {
		t.Errorf("states %s and %s differ", a.Canonical(), b.Canonical())
	}
	if x, y, na, nb := DiffStates([]State{a}, []State{b}, 1); len(x)+len(y) != 0 || na != 1 || nb != 1 {
		t.Errorf("DiffStates: %v %v %d %d", x, y, na, nb)
	}
}
