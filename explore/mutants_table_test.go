//go:build podlife_mutation

package explore

import (
	"testing"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/mutants"
	"github.com/podlife/podlife/spec"
)

// TestTableMutants runs the engine on each broken table of internal/mutants
// (built with -tags podlife_mutation, which lets fsm run rows other than
// the generated ones): the explorer must report the mutant's property.
// TLC must too: see gen's TestTableMutantsInTLC.
func TestTableMutants(t *testing.T) {
	for _, m := range mutants.All {
		if m.Table == nil {
			continue
		}
		t.Run(m.Property, func(t *testing.T) {
			rows := m.Table(spec.Table)
			restore, err := fsm.UseTable(rows)
			if err != nil {
				t.Fatal(err)
			}
			defer restore()
			// The model the core is refined against is the broken table
			// too, as TLC's is: the mutant must be caught by its property.
			saved := table
			table = spec.NewIndex(rows)
			defer func() { table = saved }()
			res, err := Explore(mutantConfig(t, m), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Violation == nil || res.Violation.Property != m.Property {
				t.Fatalf("%s: want a violation of %s, got %v", m.What, m.Property, res.Violation)
			}
			t.Logf("%s: %s after %d steps", m.What, m.Property, len(res.Violation.Trace))
		})
	}
}
