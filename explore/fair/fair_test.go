package fair

import (
	"slices"
	"testing"
)

// TestFairSCC checks the fairness refinement on small graphs. Classes: 0 is
// weakly fair, 1 strongly fair; inputs 0 and 1 belong to them, input 2 to
// none (an environment step).
func TestFairSCC(t *testing.T) {
	strong := []bool{false, true}
	classOf := [][]int{{0}, {1}, nil}
	tests := []struct {
		name  string
		n     int
		edges []Edge
		in    []bool
		fair  bool
	}{
		{"a state with nothing enabled stutters forever", 1, nil, []bool{true}, true},
		{"weakly fair step enabled and leaving", 2, []Edge{{0, 1, 0}}, []bool{true, false}, false},
		{"environment cycle, weak step enabled in one state only", 2,
			[]Edge{{0, 1, 2}, {1, 0, 2}, {1, 0, 0}}, []bool{true, true}, true},
		{"weak step enabled everywhere, never taken inside", 3,
			[]Edge{{0, 1, 2}, {1, 0, 2}, {0, 2, 0}, {1, 2, 0}}, []bool{true, true, false}, false},
		{"strong step enabled infinitely often, never taken inside", 3,
			[]Edge{{0, 1, 2}, {1, 0, 2}, {1, 2, 1}}, []bool{true, true, false}, true /* state 0 stutters: 1 is dropped */},
		{"strong step enabled in every state of the cycle, never taken", 3,
			[]Edge{{0, 1, 2}, {1, 0, 2}, {0, 2, 1}, {1, 2, 1}}, []bool{true, true, false}, false},
		{"strong step taken inside the cycle", 2, []Edge{{0, 1, 1}, {1, 0, 2}}, []bool{true, true}, true},
	}
	for _, tt := range tests {
		g := NewGraph(tt.n, tt.edges)
		got := FairSCC(g, tt.in, strong, classOf) != nil
		if got != tt.fair {
			t.Errorf("%s: fair cycle found = %v, want %v", tt.name, got, tt.fair)
		}
	}
}

func TestSCCs(t *testing.T) {
	g := NewGraph(5, []Edge{{0, 1, 0}, {1, 2, 0}, {2, 0, 0}, {2, 3, 0}, {3, 4, 0}, {4, 3, 0}})
	var got [][]int32
	for _, c := range SCCs(g, []bool{true, true, true, true, true}) {
		slices.Sort(c)
		got = append(got, c)
	}
	slices.SortFunc(got, func(a, b []int32) int { return int(a[0] - b[0]) })
	if len(got) != 2 || !slices.Equal(got[0], []int32{0, 1, 2}) || !slices.Equal(got[1], []int32{3, 4}) {
		t.Fatalf("SCCs %v", got)
	}
}

// TestPendingAndCycle: the waiting region follows edges only through
// states where the property does not hold, leads each state back to where
// it started waiting, and Cycle finds the shortest loop through the entry.
func TestPendingAndCycle(t *testing.T) {
	// 0 -a-> 1 -b-> 2 -c-> 1, 2 -d-> 3 (holds there).
	g := NewGraph(4, []Edge{{0, 1, 0}, {1, 2, 1}, {2, 1, 2}, {2, 3, 3}})
	w := Pending(g, func(s int32) bool { return s == 0 }, func(s int32) bool { return s == 3 })
	if !slices.Equal(w.In, []bool{true, true, true, false}) {
		t.Fatalf("region %v", w.In)
	}
	if w.Via[0] != -1 || w.Via[2] != 1 || w.ViaInput[2] != 1 {
		t.Fatalf("via %v %v", w.Via, w.ViaInput)
	}
	if c := Cycle(g, []int32{1, 2}, 1); !slices.Equal(c, []int16{1, 2}) {
		t.Fatalf("cycle %v, want [1 2]", c)
	}
	if c := Cycle(g, []int32{0}, 0); c != nil {
		t.Fatalf("a single state without a loop has cycle %v", c)
	}
}
