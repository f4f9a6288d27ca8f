package container

import (
	"testing"

	"github.com/podlife/podlife/spec"
	cspec "github.com/podlife/podlife/spec/container"
)

func TestSpecHashMatchesTheTable(t *testing.T) {
	if want := cspec.Hash(cspec.Table); SpecHash != want {
		t.Fatalf("fsm/container was generated from table %s, cspec.Table is %s: run go generate ./...", SpecHash, want)
	}
}

// toGo converts a spec environment of the container table into Vars and
// Params (field by field, through the schema's order).
func toGo(env *spec.Env) (Vars, Params) {
	v := func(x *spec.Var) int { return env.Vars[spec.VarIndex(x)] }
	p := func(x *spec.Param) int { return env.Params[spec.ParamIndex(x)] }
	return Vars{
			Gen: v(cspec.Gen), Started: v(cspec.Started) == 1, Code: ExitCode(v(cspec.Code)),
			Backoff: v(cspec.BackoffLevel), Replacing: v(cspec.Replacing) == 1,
		}, Params{
			Kind: ContainerKind(p(cspec.PKind)), Policy: RestartPolicy(p(cspec.PPolicy)), Rule: p(cspec.PRule) == 1,
			Code: ExitCode(p(cspec.PCode)), Sandbox: p(cspec.PSandbox), SandboxReady: p(cspec.PSandboxReady) == 1,
			Terminating: p(cspec.PTerminating) == 1, First: p(cspec.PFirst) == 1,
			BeforeKind: ContainerKind(p(cspec.PBeforeKind)), BeforeState: ContainerState(p(cspec.PBeforeState)),
			BeforeGen: p(cspec.PBeforeGen), BeforeStarted: p(cspec.PBeforeStarted) == 1, MainSeen: p(cspec.PMainSeen) == 1,
			RegularsStopped: p(cspec.PRegularsStopped) == 1, LaterSidecarsStopped: p(cspec.PLaterSidecarsStopped) == 1,
			Phase: PodPhase(p(cspec.PPhase)), PodNever: p(cspec.PPodNever) == 1, AnyRan: p(cspec.PAnyRan) == 1,
		}
}

func fromGo(v Vars) []int {
	b := func(x bool) int {
		if x {
			return 1
		}
		return 0
	}
	out := make([]int, len(cspec.Vars))
	out[spec.VarIndex(cspec.Gen)] = v.Gen
	out[spec.VarIndex(cspec.Started)] = b(v.Started)
	out[spec.VarIndex(cspec.Code)] = int(v.Code)
	out[spec.VarIndex(cspec.BackoffLevel)] = v.Backoff
	out[spec.VarIndex(cspec.Replacing)] = b(v.Replacing)
	return out
}

// TestGeneratedCodeMatchesTheTable: on every reachable record of the
// container table, every event and every valuation of the parameters its
// rows read, Fire picks the row the table's own expressions pick and
// computes the same record after it; the named operators agree too.
func TestGeneratedCodeMatchesTheTable(t *testing.T) {
	sc := cspec.Schema
	ix := sc.NewIndex(cspec.Table)
	cases := 0
	for _, rec := range sc.Reachable(cspec.Table).Records {
		for _, e := range sc.AllEvents() {
			params := map[*spec.Param]bool{}
			for _, r := range ix.Rows(rec.State, e) {
				r.Guard.Reads(map[*spec.Var]bool{}, params)
				for _, a := range r.Set {
					a.Value.Reads(map[*spec.Var]bool{}, params)
				}
			}
			var ps []*spec.Param
			for _, p := range cspec.Params {
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
	sc := cspec.Schema
	funcs := map[string]func(State, Vars, Params) bool{
		"BeforeDone": BeforeDone, "PolicyRestarts": PolicyRestarts, "MayRunAgain": MayRunAgain, "RecreateSandbox": RecreateSandbox,
	}
	if len(funcs) != len(cspec.Operators) {
		t.Fatalf("%d operators in spec, %d checked here", len(cspec.Operators), len(funcs))
	}
	for _, rec := range sc.Reachable(cspec.Table).Records {
		for k := range 64 {
			env := sc.NewEnv()
			copy(env.Vars, rec.Vars)
			env.State = int(rec.State)
			for i, p := range cspec.Params {
				vs := p.Domain.Enumerate()
				env.Params[i] = vs[(k*7+i*3+k/len(vs))%len(vs)]
			}
			v, p := toGo(env)
			for _, o := range cspec.Operators {
				if got, want := funcs[o.Name](State(rec.State), v, p), o.Expr.Eval(env) == 1; got != want {
					t.Fatalf("%s on %v %v: Go %v, spec %v", o.Name, v, p, got, want)
				}
			}
		}
	}
}
