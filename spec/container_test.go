package spec

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestContainerTableIsValid(t *testing.T) {
	if err := ContainerSchema.Validate(ContainerTable); err != nil {
		t.Fatalf("the container table is invalid:\n%v", err)
	}
	r := ContainerSchema.Reachable(ContainerTable)
	t.Logf("%d rows; %d reachable records per container", len(ContainerTable), len(r.Records))
}

// TestContainerEveryPairHasOneOutcome: determinism and totality. For every
// (state, event) and every valuation of what its guards read, at most one
// row fires, and exactly one for the inputs the runtime and the pod send.
func TestContainerEveryPairHasOneOutcome(t *testing.T) {
	sc := ContainerSchema
	ix := sc.NewIndex(ContainerTable)
	for _, s := range sc.AllStates() {
		for _, e := range sc.AllEvents() {
			rs := ix.Rows(s, e)
			vars, params := pairReads(rs, false)
			env := sc.NewEnv()
			valuations(env, vars, params, func() {
				n := 0
				for _, r := range rs {
					n += r.Guard.Eval(env)
				}
				if n > 1 || (n == 0 && sc.Events[e].Total) {
					t.Fatalf("(%s, %s): %d rows fire with %s", sc.StateName(s), sc.EventName(e), n, describe(env, vars, params))
				}
			})
		}
	}
}

// TestContainerRowsAreReachable: every row fires on some reachable record,
// but the rows that only make an input total (Ignored).
func TestContainerRowsAreReachable(t *testing.T) {
	fired := ContainerSchema.Reachable(ContainerTable).Fired
	for _, r := range ContainerTable {
		if !fired[r.ID] && !strings.HasSuffix(r.ID, "Ignored") {
			t.Errorf("row %s never fires", r.ID)
		}
	}
}

func TestValidateRejectsBrokenContainerTables(t *testing.T) {
	tests := []struct {
		name string
		edit func([]Row) []Row
		want string
	}{
		{"overlapping guards", func(rows []Row) []Row {
			rows[find(rows, "RunningExitSuccess")].Guard = B(true)
			return rows
		}, "can both fire"},
		{"missing outcome for an input", func(rows []Row) []Row {
			i := find(rows, "BackOffSandboxDiedIgnored")
			return slices.Delete(rows, i, i+1)
		}, "(BackOff, SandboxDied): no row"},
		{"create without its effect", func(rows []Row) []Row {
			rows[find(rows, "NotCreatedStart")].Effects = 0
			return rows
		}, "entering Created (CreateInstance)"},
		{"a kill without KillInstance", func(rows []Row) []Row {
			rows[find(rows, "RunningStop")].Effects = 0
			return rows
		}, "a kill (KillInstance)"},
		{"an input reads what its event does not carry", func(rows []Row) []Row {
			r := &rows[find(rows, "RunningStartupOK")]
			r.Guard = And(r.Guard, P(PTerminating))
			return rows
		}, "reads parameter Terminating"},
		{"unreachable state", func(rows []Row) []Row {
			return slices.DeleteFunc(rows, func(r Row) bool { return r.To == BackOff && r.From != BackOff })
		}, "state BackOff cannot be reached"},
		{"a reset", func(rows []Row) []Row {
			rows[find(rows, "ExitedSuccessPurge")].Reset = true
			return rows
		}, "resets a container record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := slices.Clone(ContainerTable)
			for i := range rows {
				rows[i].Set = slices.Clone(rows[i].Set)
			}
			err := ContainerSchema.Validate(tt.edit(rows))
			if err == nil {
				t.Fatalf("Validate accepted the broken table")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate did not report %q; it said:\n%v", tt.want, err)
			}
		})
	}
}

func TestContainerHashFollowsTheTable(t *testing.T) {
	rows := slices.Clone(ContainerTable)
	rows[0].Doc = "docs do not count"
	if ContainerHash(rows) != ContainerHash(ContainerTable) {
		t.Errorf("a doc-only change altered the hash")
	}
	rows[0].Guard = B(true)
	if ContainerHash(rows) == ContainerHash(ContainerTable) {
		t.Errorf("a guard change did not alter the hash")
	}
}

// randomContainerEnv is an arbitrary container and pod: any state, any
// value of every variable widened by one on each side, any parameters.
func randomContainerEnv(r *rand.Rand) *Env {
	sc := ContainerSchema
	pick := func(d *Domain) int {
		if d.Kind == Int {
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
	own := map[*Var]bool{}
	for _, v := range ContainerVars {
		own[v] = true
	}
	ownP := map[*Param]bool{}
	for _, p := range ContainerParams {
		ownP[p] = true
	}
	seen := map[string]bool{}
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range ContainerProperties {
		if seen[p.Name] || p.Doc == "" || p.Ref == "" {
			t.Errorf("%s: defined twice, or no doc or reference", p.Name)
		}
		seen[p.Name] = true
		exprs := []Expr{p.Holds}
		if p.Kind == LeadsTo {
			exprs = append(exprs, p.From)
		}
		for _, e := range exprs {
			if k, _, err := e.typeOf(); err != nil || k != Bool {
				t.Errorf("%s: %s is not a Boolean formula: %v", p.Name, e, err)
			}
			vars, params := map[*Var]bool{}, map[*Param]bool{}
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
			if p.Kind != StepProperty && hasNext(e) {
				t.Errorf("%s: a %s reads the end of a step", p.Name, p.Kind)
			}
		}
		failed := false
		for range 400000 {
			env := randomContainerEnv(r)
			switch p.Kind {
			case Invariant:
				failed = p.Holds.Eval(env) == 0
			case StepProperty:
				env.Next = randomContainerEnv(r)
				failed = p.Holds.Eval(env) == 0
			case LeadsTo:
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
