package explore

import (
	"math/rand/v2"
	"testing"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/spec"
)

// randomView is an arbitrary pod view and the same pod as a spec.Env.
func randomView(r *rand.Rand) (podView, *spec.Env) {
	env := spec.NewEnv()
	env.Shell = make([]int, len(spec.ShellVars))
	val := func(d *spec.Domain) int {
		if d.Kind == spec.Int {
			return d.Min - 1 + r.IntN(d.Max-d.Min+3)
		}
		vs := d.Enumerate()
		return vs[r.IntN(len(vs))]
	}
	for i, v := range spec.Vars {
		env.Vars[i] = val(v.Domain)
	}
	for i, v := range spec.ShellVars {
		env.Shell[i] = val(v.Domain)
	}
	env.State = r.IntN(len(spec.States()))
	for w := range env.World {
		env.World[w] = r.IntN(3)
		if w == int(spec.FirstInWaiting) || w == int(spec.StaticPod) || w == int(spec.Synced) {
			env.World[w] %= 2
		}
	}
	b := func(v *spec.Var) bool { return env.Vars[spec.VarIndex(v)] == 1 }
	sh := func(v *spec.Var) int { return env.Shell[spec.ShellVarIndex(v)] }
	v := podView{
		State: fsm.State(env.State), Static: b(spec.Static), HasConfig: b(spec.HasConfig), Started: b(spec.Started),
		Deleted: b(spec.Deleted), Evicted: b(spec.Evicted), RestartRequested: b(spec.RestartRequested),
		ObservedRuntime: b(spec.ObservedRuntime), Grace: env.Vars[spec.VarIndex(spec.Grace)],
		Pending: fsm.Pending(env.Vars[spec.VarIndex(spec.Pending)]), InFlight: fsm.InFlight(env.Vars[spec.VarIndex(spec.InFlight)]),
		Waiters: b(spec.Waiters), Loop: sh(spec.Loop) == 1, Timer: sh(spec.Timer) == 1, Channels: sh(spec.Channels),
		CancelOwed: sh(spec.CancelOwed) == 1, StaleTimer: sh(spec.StaleTimer) == 1, SyncGrace: sh(spec.SyncGrace), AskedGrace: sh(spec.AskedGrace),
		FirstInWaiting: env.World[spec.FirstInWaiting] == 1, WaitingCount: env.World[spec.WaitingCount],
		SlotHolders: env.World[spec.SlotHolders], StaticPod: env.World[spec.StaticPod] == 1, Synced: env.World[spec.Synced] == 1,
	}
	return v, env
}

// TestGeneratedPropertiesFollowTheSpec: the Go the generator rendered for
// each property agrees with the property's own expression (spec.Expr.Eval)
// on arbitrary pods and steps, so TLC and the explorer check one formula.
func TestGeneratedPropertiesFollowTheSpec(t *testing.T) {
	if len(properties) != len(spec.Properties) {
		t.Fatalf("%d generated properties, %d in spec (run go generate ./...)", len(properties), len(spec.Properties))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i, sp := range spec.Properties {
		p := &properties[i]
		if p.name != sp.Name {
			t.Fatalf("generated property %d is %s, spec's %s (run go generate ./...)", i, p.name, sp.Name)
		}
		for range 20000 {
			a, envA := randomView(r)
			b, envB := randomView(r)
			envA.Next = envB
			if got, want := p.holds(&a, &b), sp.Holds.Eval(envA) == 1; got != want {
				t.Fatalf("%s: Go says %v, the spec %v on\n  %+v\n  %+v", sp.Name, got, want, a, b)
			}
			if sp.Kind == spec.LeadsTo {
				if got, want := p.from(&a, nil), sp.From.Eval(envA) == 1; got != want {
					t.Fatalf("%s: From: Go says %v, the spec %v on %+v", sp.Name, got, want, a)
				}
			}
		}
	}
}

// TestPropertiesFollowTheTable: the generated properties come from the
// table the engine runs.
func TestPropertiesFollowTheTable(t *testing.T) {
	if specHash != fsm.SpecHash {
		t.Fatalf("explore/zz_generated.properties.go is from table %s, fsm from %s (run go generate ./...)", specHash, fsm.SpecHash)
	}
}
