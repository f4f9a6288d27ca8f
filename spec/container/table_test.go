package container

import (
	"github.com/podlife/podlife/spec"

	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestContainerTableIsValid(t *testing.T) {
	if err := Schema.Validate(Table); err != nil {
		t.Fatalf("the container table is invalid:\n%v", err)
	}
	r := Schema.Reachable(Table)
	t.Logf("%d rows; %d reachable records per container", len(Table), len(r.Records))
}

// TestContainerEveryPairHasOneOutcome: determinism and totality. For every
// (state, event) and every valuation of what its guards read, at most one
// row fires, and exactly one for the inputs the runtime and the pod send.
func TestContainerEveryPairHasOneOutcome(t *testing.T) {
	sc := Schema
	sc.EachValuation(Table, func(s spec.State, e spec.Event, n int, valuation string) {
		if n > 1 || (n == 0 && sc.Events[e].Total) {
			t.Fatalf("(%s, %s): %d rows fire with %s", sc.StateName(s), sc.EventName(e), n, valuation)
		}
	})
}

// TestContainerRowsAreReachable: every row fires on some reachable record,
// but the rows that only make an input total (Ignored).
func TestContainerRowsAreReachable(t *testing.T) {
	fired := Schema.Reachable(Table).Fired
	for _, r := range Table {
		if !fired[r.ID] && !strings.HasSuffix(r.ID, "Ignored") {
			t.Errorf("row %s never fires", r.ID)
		}
	}
}

func TestValidateRejectsBrokenContainerTables(t *testing.T) {
	tests := []struct {
		name string
		edit func([]spec.Row) []spec.Row
		want string
	}{
		{"overlapping guards", func(rows []spec.Row) []spec.Row {
			rows[find(rows, "RunningExitSuccess")].Guard = spec.B(true)
			return rows
		}, "can both fire"},
		{"missing outcome for an input", func(rows []spec.Row) []spec.Row {
			i := find(rows, "BackOffSandboxDiedIgnored")
			return slices.Delete(rows, i, i+1)
		}, "(BackOff, SandboxDied): no row"},
		{"create without its effect", func(rows []spec.Row) []spec.Row {
			rows[find(rows, "NotCreatedStart")].Effects = 0
			return rows
		}, "entering Created (CreateInstance)"},
		{"a kill without KillInstance", func(rows []spec.Row) []spec.Row {
			rows[find(rows, "RunningStop")].Effects = 0
			return rows
		}, "a kill (KillInstance)"},
		{"an input reads what its event does not carry", func(rows []spec.Row) []spec.Row {
			r := &rows[find(rows, "RunningStartupOK")]
			r.Guard = spec.And(r.Guard, spec.P(PTerminating))
			return rows
		}, "reads parameter Terminating"},
		{"unreachable state", func(rows []spec.Row) []spec.Row {
			return slices.DeleteFunc(rows, func(r spec.Row) bool { return r.To == BackOff && r.From != BackOff })
		}, "state BackOff cannot be reached"},
		{"a reset", func(rows []spec.Row) []spec.Row {
			rows[find(rows, "ExitedSuccessPurge")].Reset = true
			return rows
		}, "resets a container record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := slices.Clone(Table)
			for i := range rows {
				rows[i].Set = slices.Clone(rows[i].Set)
			}
			err := Schema.Validate(tt.edit(rows))
			if err == nil {
				t.Fatalf("Validate accepted the broken table")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate did not report %q; it said:\n%v", tt.want, err)
			}
		})
	}
}

// find is the position of the row called id; a test naming no row is wrong.
func find(rows []spec.Row, id string) int {
	i := spec.RowIndex(rows, id)
	if i < 0 {
		panic("no row " + id)
	}
	return i
}

func TestContainerHashFollowsTheTable(t *testing.T) {
	rows := slices.Clone(Table)
	rows[0].Doc = "docs do not count"
	if Hash(rows) != Hash(Table) {
		t.Errorf("a doc-only change altered the hash")
	}
	rows[0].Guard = spec.B(true)
	if Hash(rows) == Hash(Table) {
		t.Errorf("a guard change did not alter the hash")
	}
}

// randomContainerEnv is an arbitrary container and pod: any state, any
// value of every variable widened by one on each side, any parameters.
func randomContainerEnv(r *rand.Rand) *spec.Env {
	sc := Schema
	pick := func(d *spec.Domain) int {
		if d.Kind == spec.Int {
			return d.Min - 1 + r.IntN(d.Max-d.Min+3)
		}
		vs := d.Enumerate()
		return vs[r.IntN(len(vs))]
	}
	env := sc.NewEnv()
	env.State = r.IntN(len(sc.StateNames))
	for i, v := range sc.Vars {
		env.Vars[i] = pick(v.Domain)
	}
	for i, p := range sc.Params {
		env.Params[i] = pick(p.Domain)
	}
	return env
}

// TestContainerPropertiesAreWellFormedAndCanFail: unique names, Boolean
// formulas that read only the container table, From exactly on leads-to
// properties, and each false somewhere among arbitrary containers (a
// property that cannot fail checks nothing).
func TestContainerPropertiesAreWellFormedAndCanFail(t *testing.T) {
	own := map[*spec.Var]bool{}
	for _, v := range Vars {
		own[v] = true
	}
	ownP := map[*spec.Param]bool{}
	for _, p := range Params {
		ownP[p] = true
	}
	seen := map[string]bool{}
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range Properties {
		if seen[p.Name] {
			t.Errorf("%s: defined twice", p.Name)
		}
		seen[p.Name] = true
		if err := p.WellFormed(); err != nil {
			t.Error(err)
		}
		for _, e := range []spec.Expr{p.Holds, p.From} {
			vars, params := map[*spec.Var]bool{}, map[*spec.Param]bool{}
			e.Reads(vars, params)
			for v := range vars {
				if !own[v] {
					t.Errorf("%s reads %s, not a container variable", p.Name, v.Name)
				}
			}
			for q := range params {
				if !ownP[q] {
					t.Errorf("%s reads %s, not a container parameter", p.Name, q.Name)
				}
			}
		}
		failed := false
		for range 400000 {
			env := randomContainerEnv(r)
			switch p.Kind {
			case spec.Invariant:
				failed = p.Holds.Eval(env) == 0
			case spec.StepProperty:
				env.Next = randomContainerEnv(r)
				failed = p.Holds.Eval(env) == 0
			case spec.LeadsTo:
				failed = p.From.Eval(env) == 1 && p.Holds.Eval(env) == 0
			}
			if failed {
				break
			}
		}
		if !failed {
			t.Errorf("%s holds of 400,000 arbitrary containers: it cannot fail", p.Name)
		}
	}
}
