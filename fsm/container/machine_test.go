package container

import (
	"testing"

	"github.com/podlife/podlife/spec"
)

func TestSpecHashMatchesTheTable(t *testing.T) {
	if want := spec.ContainerHash(spec.ContainerTable); SpecHash != want {
		t.Fatalf("fsm/container was generated from table %s, spec.ContainerTable is %s: run go generate ./...", SpecHash, want)
	}
}

// toGo converts a spec environment of the container table into Vars and
// Params (field by field, through the schema's order).
func toGo(env *spec.Env) (Vars, Params) {
	v := func(x *spec.Var) int { return env.Vars[spec.VarIndex(x)] }
	p := func(x *spec.Param) int { return env.Params[spec.ParamIndex(x)] }
	return Vars{
			Gen: v(spec.CGen), Started: v(spec.CStarted) == 1, Code: ExitCode(v(spec.CCode)),
			Backoff: v(spec.CBackoff), Replacing: v(spec.CReplacing) == 1,
		}, Params{
			Kind: ContainerKind(p(spec.PKind)), Policy: RestartPolicy(p(spec.PPolicy)), Rule: p(spec.PRule) == 1,
			Code: ExitCode(p(spec.PCode)), Sandbox: p(spec.PSandbox), SandboxReady: p(spec.PSandboxReady) == 1,
			Terminating: p(spec.PTerminating) == 1, First: p(spec.PFirst) == 1,
			BeforeKind: ContainerKind(p(spec.PBeforeKind)), BeforeState: ContainerState(p(spec.PBeforeState)),
			BeforeGen: p(spec.PBeforeGen), BeforeStarted: p(spec.PBeforeStarted) == 1, MainSeen: p(spec.PMainSeen) == 1,
			RegularsStopped: p(spec.PRegularsStopped) == 1, LaterSidecarsStopped: p(spec.PLaterSidecarsStopped) == 1,
			Phase: PodPhase(p(spec.PPhase)), PodNever: p(spec.PPodNever) == 1, AnyRan: p(spec.PAnyRan) == 1,
		}
}

func fromGo(v Vars) []int {
	b := func(x bool) int {
		if x {
			return 1
		}
		return 0
	}
	out := make([]int, len(spec.ContainerVars))
	out[spec.VarIndex(spec.CGen)] = v.Gen
	out[spec.VarIndex(spec.CStarted)] = b(v.Started)
	out[spec.VarIndex(spec.CCode)] = int(v.Code)
	out[spec.VarIndex(spec.CBackoff)] = v.Backoff
	out[spec.VarIndex(spec.CReplacing)] = b(v.Replacing)
	return out
}

// TestGeneratedCodeMatchesTheTable: on every reachable record of the
// container table, every event and every valuation of the parameters its
// rows read, Fire picks the row the table's own expressions pick and
// computes the same record after it; the named operators agree too.
func TestGeneratedCodeMatchesTheTable(t *testing.T) {
	sc := spec.ContainerSchema
	ix := sc.NewIndex(spec.ContainerTable)
	cases := 0
	for _, rec := range sc.Reachable(spec.ContainerTable).Records {
		for _, e := range sc.AllEvents() {
			params := map[*spec.Param]bool{}
			for _, r := range ix.Rows(rec.State, e) {
				r.Guard.Reads(map[*spec.Var]bool{}, params)
				for _, a := range r.Set {
					a.Value.Reads(map[*spec.Var]bool{}, params)
				}
			}
			var ps []*spec.Param
			for _, p := range spec.ContainerParams {
				if params[p] {
					ps = append(ps, p)
				}
			}
			env := sc.NewEnv()
			copy(env.Vars, rec.Vars)
			env.State = int(rec.State)
			var each func(k int)
			each = func(k int) {
				if k < len(ps) {
					for _, x := range ps[k].Domain.Enumerate() {
						env.Params[spec.ParamIndex(ps[k])] = x
						each(k + 1)
					}
					return
				}
				cases++
				want := ix.Enabled(rec.State, e, env)
				v, p := toGo(env)
				tr, err := Fire(State(rec.State), v, Event(e), p)
				switch {
				case want == nil && err == nil:
					t.Fatalf("%s in %s: Fire took %s, the table has no row", sc.EventName(e), sc.StateName(rec.State), tr.Row)
				case want != nil && err != nil:
					t.Fatalf("%s in %s: Fire refused (%v), the table takes %s", sc.EventName(e), sc.StateName(rec.State), err, want.ID)
				case want != nil && (tr.Row != want.ID || int(tr.To) != int(want.To) || !equal(fromGo(tr.After), want.ApplyIn(sc, env))):
					t.Fatalf("%s in %s: Fire took %s to %s %v, the table %s to %s %v", sc.EventName(e), sc.StateName(rec.State),
						tr.Row, tr.To, fromGo(tr.After), want.ID, sc.StateName(want.To), want.ApplyIn(sc, env))
				}
				if want != nil && int(tr.Effects) != int(want.Effects) {
					t.Fatalf("row %s: effects %s, the table's %d", want.ID, tr.Effects, want.Effects)
				}
			}
			each(0)
		}
	}
	t.Logf("%d (record, event, parameters) cases", cases)
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOperatorsMatchTheSpec: the generated named operators agree with
// their spec expressions on arbitrary containers.
func TestOperatorsMatchTheSpec(t *testing.T) {
	sc := spec.ContainerSchema
	funcs := map[string]func(State, Vars, Params) bool{
		"BeforeDone": BeforeDone, "PolicyRestarts": PolicyRestarts, "MayRunAgain": MayRunAgain, "RecreateSandbox": RecreateSandbox,
	}
	if len(funcs) != len(spec.ContainerOperators) {
		t.Fatalf("%d operators in spec, %d checked here", len(spec.ContainerOperators), len(funcs))
	}
	for _, rec := range sc.Reachable(spec.ContainerTable).Records {
		for k := range 64 {
			env := sc.NewEnv()
			copy(env.Vars, rec.Vars)
			env.State = int(rec.State)
			for i, p := range spec.ContainerParams {
				vs := p.Domain.Enumerate()
				env.Params[i] = vs[(k*7+i*3+k/len(vs))%len(vs)]
			}
			v, p := toGo(env)
			for _, o := range spec.ContainerOperators {
				if got, want := funcs[o.Name](State(rec.State), v, p), o.Expr.Eval(env) == 1; got != want {
					t.Fatalf("%s on %v %v: Go %v, spec %v", o.Name, v, p, got, want)
				}
			}
		}
	}
}
