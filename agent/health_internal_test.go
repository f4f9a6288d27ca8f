package agent

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Three housekeeping runtime reads in a row must fail for the agent to be
// unhealthy; one success makes it healthy again.
func TestRuntimeReads(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	down := errors.New("runtime down")
	tests := []struct {
		name  string
		reads []error
		want  string // "" is healthy
	}{
		{name: "no reads"},
		{name: "two failures", reads: []error{down, down}},
		{name: "three failures", reads: []error{down, down, down},
			want: "runtime reads failing since 2026-01-02T03:04:05Z (3 housekeeping intervals in a row): runtime down"},
		{name: "since the first of the run", reads: []error{nil, down, errors.New("a"), errors.New("b"), down},
			want: "since 2026-01-02T03:04:06Z (4 housekeeping intervals in a row): runtime down"},
		{name: "a success ends the run", reads: []error{down, down, down, nil}},
		{name: "interrupted runs do not add up", reads: []error{down, down, nil, down, down}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r runtimeReads
			for i, err := range tt.reads {
				r.observe(err, t0.Add(time.Duration(i)*time.Second))
			}
			got := r.problem()
			if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
				t.Errorf("problem() = %q, want %q", got, tt.want)
			}
		})
	}
}
