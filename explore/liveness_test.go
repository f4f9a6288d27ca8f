package explore

import (
	"slices"
	"testing"
)

// TestFairSCC checks the fairness refinement on small graphs. Classes: 0 is
// weakly fair, 1 strongly fair; inputs 0 and 1 belong to them, input 2 to
// none (an environment step).
func TestFairSCC(t *testing.T) {
	classes := []fairness{{strong: false}, {strong: true}}
	classOf := [][]int{{0}, {1}, nil}
	tests := []struct {
		name  string
		n     int
		edges []edge
		in    []bool
		fair  bool
	}{
		{"a state with nothing enabled stutters forever", 1, nil, []bool{true}, true},
		{"weakly fair step enabled and leaving", 2, []edge{{0, 1, 0}}, []bool{true, false}, false},
		{"environment cycle, weak step enabled in one state only", 2,
			[]edge{{0, 1, 2}, {1, 0, 2}, {1, 0, 0}}, []bool{true, true}, true},
		{"weak step enabled everywhere, never taken inside", 3,
			[]edge{{0, 1, 2}, {1, 0, 2}, {0, 2, 0}, {1, 2, 0}}, []bool{true, true, false}, false},
		{"strong step enabled infinitely often, never taken inside", 3,
			[]edge{{0, 1, 2}, {1, 0, 2}, {1, 2, 1}}, []bool{true, true, false}, true /* state 0 stutters: 1 is dropped */},
		{"strong step enabled in every state of the cycle, never taken", 3,
			[]edge{{0, 1, 2}, {1, 0, 2}, {0, 2, 1}, {1, 2, 1}}, []bool{true, true, false}, false},
		{"strong step taken inside the cycle", 2, []edge{{0, 1, 1}, {1, 0, 2}}, []bool{true, true}, true},
	}
	for _, tt := range tests {
		g := newGraph(tt.n, tt.edges)
		got := fairSCC(g, tt.in, classes, classOf) != nil
		if got != tt.fair {
			t.Errorf("%s: fair cycle found = %v, want %v", tt.name, got, tt.fair)
		}
	}
}

func TestSCCs(t *testing.T) {
	g := newGraph(5, []edge{{0, 1, 0}, {1, 2, 0}, {2, 0, 0}, {2, 3, 0}, {3, 4, 0}, {4, 3, 0}})
	var got [][]int32
	for _, c := range sccs(g, []bool{true, true, true, true, true}) {
		slices.Sort(c)
		got = append(got, c)
	}
	slices.SortFunc(got, func(a, b []int32) int { return int(a[0] - b[0]) })
	if len(got) != 2 || !slices.Equal(got[0], []int32{0, 1, 2}) || !slices.Equal(got[1], []int32{3, 4}) {
		t.Fatalf("SCCs %v", got)
	}
}
