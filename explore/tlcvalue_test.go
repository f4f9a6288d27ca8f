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
		{`("p2" :> [a |-> 1] @@ "p1" :> [a |-> 2])`, `("p1" :> [a |-> 2] @@ "p2" :> [a |-> 1])`},
		{"(\"p1\" :>\n   [ b |-> FALSE,\n     a |-> <<1, 2>> ])", `("p1" :> [a |-> <<1, 2>>, b |-> FALSE])`},
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
	for _, bad := range []string{`[a |-> ]`, `<<1 2>>`, `("p1" :> 1`, `"open`, `[a = 1]`, `1 2`} {
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
/\ rec = ("p1" :> [state |-> "Absent", grace |-> 0])
/\ synced = FALSE
/\ waiting = <<>>

State 2:
/\ rec = ( "p1" :>
      [ state |-> "Waiting",
        grace |-> 0 ] )
/\ synced = FALSE
/\ waiting = <<"p1">>

State 3:
/\ rec = ("p1" :> [state |-> "Running", grace |-> 0])
/\ synced = TRUE
/\ waiting = <<>>
`
	explorer := `State 1:
/\ synced = FALSE /\ waiting = <<"p1">> /\ rec = ("p1" :> [grace |-> 0, state |-> "Waiting"])

State 2:
/\ rec = ("p1" :> [grace |-> 0, state |-> "Absent"]) /\ synced = FALSE /\ waiting = <<>>

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
}
