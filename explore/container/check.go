package container

import (
	"fmt"
	"slices"

	fc "github.com/podlife/podlife/fsm/container"
	"github.com/podlife/podlife/spec"
	sc "github.com/podlife/podlife/spec/container"
)

// envs are the environments a property of container i reads in one
// state: its record (Vars, State) and its facts (Params), as the
// generated tla/ContainerLifecycleProperties.tla reads ctr[i] and facts[i].
type envs [MaxContainers]spec.Env

// fill sets e to the environments of s.
func (m *model) fill(e *envs, s *state) {
	for i := range m.n {
		env := &e[i]
		if env.Vars == nil {
			env.Vars, env.Params = make([]int, len(sc.Vars)), make([]int, len(sc.Params))
		}
		env.State = int(s.ctr[i].State)
		varInts(s.ctr[i].Vars, env.Vars)
		paramInts(m.factsOf(i, s), env.Params)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// varInts writes v in container.Vars order (TestIntsFollowTheSchema).
func varInts(v fc.Vars, out []int) {
	out[0], out[1], out[2], out[3], out[4] = v.Gen, b2i(v.Started), int(v.Code), v.Backoff, b2i(v.Replacing)
}

// paramInts writes p in container.Params order (TestIntsFollowTheSchema).
func paramInts(p fc.Params, out []int) {
	copy(out, []int{int(p.Kind), int(p.Policy), b2i(p.Rule), int(p.Code), p.Sandbox, b2i(p.SandboxReady), b2i(p.Terminating),
		b2i(p.First), int(p.BeforeKind), int(p.BeforeState), p.BeforeGen, b2i(p.BeforeStarted), b2i(p.MainSeen),
		b2i(p.RegularsStopped), b2i(p.LaterSidecarsStopped), int(p.Phase), b2i(p.PodNever), b2i(p.AnyRan)})
}

// invariant returns the first invariant that fails in the state of e.
func (m *model) invariant(props []spec.Property, e *envs) (string, int) {
	for _, p := range props {
		if p.Kind != spec.Invariant {
			continue
		}
		for i := range m.n {
			if p.Holds.Eval(&e[i]) != 1 {
				return p.Name, i
			}
		}
	}
	return "", -1
}

// step returns the first step property that fails on the step from the
// state of a to that of b.
func (m *model) step(props []spec.Property, a, b *envs) (string, int) {
	for _, p := range props {
		if p.Kind != spec.StepProperty {
			continue
		}
		for i := range m.n {
			a[i].Next = &b[i]
			ok := p.Holds.Eval(&a[i]) == 1
			a[i].Next = nil
			if !ok {
				return p.Name, i
			}
		}
	}
	return "", -1
}

// fairness is the model's Fairness: per container, weak fairness of its
// decisions, of its exits unless it is a sidecar (fair runtimes), strong
// fairness of its startup probe passing; weak fairness of CreateSandbox.
// It returns whether each class is strong and the classes of each input.
func (m *model) fairness(inputs []Input) (strong []bool, classOf [][]int) {
	classOf = make([][]int, len(inputs))
	add := func(isStrong bool, member func(Input) bool) {
		c := len(strong)
		strong = append(strong, isStrong)
		for ii, in := range inputs {
			if member(in) {
				classOf[ii] = append(classOf[ii], c)
			}
		}
	}
	for i := range m.n {
		add(false, func(in Input) bool { return in.Ctr == i && in.Event.Decision() })
		if m.cfg.Kinds[i] != sidecarK {
			add(false, func(in Input) bool { return in.Ctr == i && in.Event == fc.Exit })
		}
		add(true, func(in Input) bool { return in.Ctr == i && in.Event == fc.StartupOK })
	}
	add(false, func(in Input) bool { return in.Ctr < 0 && in.Pod == CreateSandbox })
	return strong, classOf
}

// properties returns the configuration's properties, in table order.
func (c Config) properties() []spec.Property {
	var out []spec.Property
	for _, name := range c.checked() {
		p, _ := sc.PropertyNamed(name)
		out = append(out, p)
	}
	return out
}

// describe names a violation of property name by container i.
func (m *model) describe(name string, i int) string {
	return fmt.Sprintf("%s violated by container %d (%s)", name, i+1, m.cfg.Kinds[i])
}

// hasLeadsTo reports whether any property is a leads-to property.
func hasLeadsTo(props []spec.Property) bool {
	return slices.ContainsFunc(props, func(p spec.Property) bool { return p.Kind == spec.LeadsTo })
}
