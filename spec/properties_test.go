package spec

import (
	"math/rand/v2"
	"testing"
)

// TestPropertiesAreWellFormed: unique names, Boolean formulas, From exactly
// on leads-to properties, a reference for each, and Shell variables only
// where they belong.
func TestPropertiesAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Properties {
		if seen[p.Name] {
			t.Errorf("%s: defined twice", p.Name)
		}
		seen[p.Name] = true
		if err := p.WellFormed(); err != nil {
			t.Error(err)
		}
	}
}

// randomEnv is an arbitrary pod: any state, any value of every variable's
// domain widened by one on each side (so a domain test can fail), any world
// facts.
func randomEnv(r *rand.Rand) *Env {
	pick := func(d *Domain) int {
		vs := d.Enumerate()
		if d.Kind == Int {
			return d.Min - 1 + r.IntN(d.Max-d.Min+3)
		}
		return vs[r.IntN(len(vs))]
	}
	env := NewEnv()
	env.State = r.IntN(int(numStates))
	for i, v := range Vars {
		env.Vars[i] = pick(v.Domain)
	}
	env.Shell = make([]int, len(ShellVars))
	for i, v := range ShellVars {
		env.Shell[i] = pick(v.Domain)
	}
	for w := range env.World {
		if worldInfo[w].kind == Bool {
			env.World[w] = r.IntN(2)
		} else {
			env.World[w] = r.IntN(3)
		}
	}
	return env
}

// TestPropertiesCanFail: every property is false somewhere among arbitrary
// pods (and pairs of pods, for steps): a property that holds of every
// state restates a definition and checks nothing. A leads-to property
// needs a state where From holds and Holds does not.
func TestPropertiesCanFail(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range Properties {
		failed := false
		for range 200000 {
			env := randomEnv(r)
			switch p.Kind {
			case Invariant:
				failed = p.Holds.Eval(env) == 0
			case StepProperty:
				env.Next = randomEnv(r)
				failed = p.Holds.Eval(env) == 0
			case LeadsTo:
				failed = p.From.Eval(env) == 1 && p.Holds.Eval(env) == 0
			}
			if failed {
				break
			}
		}
		if !failed {
			t.Errorf("%s holds of 200,000 arbitrary pods: it cannot fail", p.Name)
		}
	}
}
