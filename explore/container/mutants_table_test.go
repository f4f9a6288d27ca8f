//go:build podlife_mutation

package container

import (
	"regexp"
	"testing"

	fc "github.com/podlife/podlife/fsm/container"
	"github.com/podlife/podlife/internal/mutants"
	"github.com/podlife/podlife/spec"
	sc "github.com/podlife/podlife/spec/container"
)

// TestContainerMutants runs the explorer on each broken table and each
// broken named operator of mutants.Container (built with -tags
// podlife_mutation, which lets fsm/container's Fire run rows other than
// the generated ones): it must report the mutant's property, as TLC does
// (gen's TestContainerMutantsInTLC). The edits of the hand-written model
// are TestModelMutants'.
func TestContainerMutants(t *testing.T) {
	n := 0
	for _, m := range mutants.Container {
		if m.Table == nil && m.Operators == nil {
			continue
		}
		n++
		name := m.Property
		if m.Bug != "" {
			name += "/" + regexp.MustCompile(`[^0-9]+`).ReplaceAllString(m.Bug, "_")
		}
		t.Run(name, func(t *testing.T) {
			cfg, err := ShippedConfig(m.Config)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Properties = []string{m.Property}
			model := newModel(cfg)
			if m.Table != nil {
				restore, err := fc.UseTable(m.Table(sc.Table))
				if err != nil {
					t.Fatal(err)
				}
				defer restore()
			}
			if m.Operators != nil {
				for _, op := range m.Operators(sc.Operators) {
					f := operator(op.Expr)
					switch op.Name {
					case "MayRunAgain":
						model.mayRunAgain = f
					case "RecreateSandbox":
						model.recreateSandbox = f
					}
				}
			}
			res, err := explore(cfg, model)
			if err != nil {
				t.Fatal(err)
			}
			if res.Violation == nil || res.Violation.Property != m.Property {
				t.Fatalf("%s: want a violation of %s, got %v", m.What, m.Property, res.Violation)
			}
			t.Logf("%s: %s after %d steps (cycle %d)", m.What, res.Violation.Message, len(res.Violation.Trace), len(res.Violation.Cycle))
		})
	}
	if n == 0 {
		t.Fatal("mutants.Container has no broken table")
	}
}

// operator evaluates a named operator of the container table from its
// expression, as the generated function of fsm/container would.
func operator(e spec.Expr) func(fc.State, fc.Vars, fc.Params) bool {
	return func(s fc.State, v fc.Vars, p fc.Params) bool {
		env := sc.Schema.NewEnv()
		env.State = int(s)
		varInts(v, env.Vars)
		paramInts(p, env.Params)
		return e.Eval(env) == 1
	}
}
