package container

import (
	"fmt"
	"strings"

	fc "github.com/podlife/podlife/fsm/container"
)

// ctr is one container's record: ctr[i] of tla/ContainerLifecycle.tla.
type ctr struct {
	State fc.State
	Vars  fc.Vars
}

// state is one state of the model: every variable of
// tla/ContainerLifecycle.tla but facts, which is a function of the others
// (factsOf). It is comparable: the visited set keys on it.
type state struct {
	ctr         [MaxContainers]ctr
	sandbox     int
	ready       bool
	terminating bool
	phase       fc.PodPhase
}

// model holds a configuration's constants and the named operators of the
// table the model reads besides the rows (generated in fsm/container; the
// mutation tests swap in broken ones, as TLC's mutants render them).
type model struct {
	cfg Config
	n   int
	// before[i] is the container that gates i (BeforeOf), -1 for none.
	before          []int
	mayRunAgain     func(fc.State, fc.Vars, fc.Params) bool
	recreateSandbox func(fc.State, fc.Vars, fc.Params) bool
	// fire is fsm/container.Fire.
	fire func(fc.State, fc.Vars, fc.Event, fc.Params) (fc.Transition, error)
}

func newModel(cfg Config) *model {
	m := &model{cfg: cfg, n: len(cfg.Kinds), mayRunAgain: fc.MayRunAgain, recreateSandbox: fc.RecreateSandbox, fire: fc.Fire}
	last := -1
	for i, k := range cfg.Kinds {
		if inInitOrder(k) {
			last = i
		}
	}
	for i, k := range cfg.Kinds {
		switch {
		case inInitOrder(k) && i > 0:
			m.before = append(m.before, i-1)
		case inInitOrder(k):
			m.before = append(m.before, -1)
		default:
			m.before = append(m.before, last)
		}
	}
	return m
}

func live(c *ctr) bool { return c.State == fc.Created || c.State == fc.Running }

// anyRan is AnyRan: some container started.
func (m *model) anyRan(s *state) bool {
	for i := range m.n {
		if c := &s.ctr[i]; c.State != fc.NotCreated && c.State != fc.Created || c.Vars.Code != fc.ExitCodeNone {
			return true
		}
	}
	return false
}

// factsOf is FactsOf(i, ...) of the state's variables: the parameters
// container i's rows read.
func (m *model) factsOf(i int, s *state) fc.Params {
	p := fc.Params{Kind: m.cfg.Kinds[i], Policy: m.cfg.Policies[i], Rule: m.cfg.Rules[i],
		Sandbox: s.sandbox, SandboxReady: s.ready, Terminating: s.terminating,
		First: m.before[i] < 0, BeforeKind: initK, BeforeState: fc.ContainerStateNotCreated,
		RegularsStopped: true, LaterSidecarsStopped: true, Phase: s.phase, PodNever: m.cfg.PodNever, AnyRan: m.anyRan(s)}
	if b := m.before[i]; b >= 0 {
		p.BeforeKind, p.BeforeState = m.cfg.Kinds[b], fc.ContainerState(s.ctr[b].State)
		p.BeforeGen, p.BeforeStarted = s.ctr[b].Vars.Gen, s.ctr[b].Vars.Started
	}
	for j := range m.n {
		switch c := &s.ctr[j]; m.cfg.Kinds[j] {
		case regularK:
			p.MainSeen = p.MainSeen || c.State != fc.NotCreated
			p.RegularsStopped = p.RegularsStopped && !live(c)
		case sidecarK:
			p.LaterSidecarsStopped = p.LaterSidecarsStopped && (j <= i || !live(c))
		}
	}
	return p
}

func terminal(ph fc.PodPhase) bool { return ph == fc.PodPhaseSucceeded || ph == fc.PodPhaseFailed }

// phaseOf is PhaseOf: the pod's phase (kubelet getPhase) after a step
// that left the variables s (s.phase: the phase before it).
func (m *model) phaseOf(s *state) fc.PodPhase {
	if terminal(s.phase) {
		return s.phase
	}
	if !s.ready && m.cfg.PodNever && m.anyRan(s) && !s.terminating {
		return fc.PodPhaseFailed
	}
	done := func(i int) bool {
		c := &s.ctr[i]
		return c.Vars.Gen == s.sandbox && (c.State == fc.ExitedSuccess || c.State == fc.ExitedFailure) &&
			!m.mayRunAgain(c.State, c.Vars, m.factsOf(i, s))
	}
	for i := range m.n {
		if m.cfg.Kinds[i] == initK && s.ctr[i].State == fc.ExitedFailure && done(i) {
			return fc.PodPhaseFailed
		}
	}
	regs, allDone, allSucceeded := 0, true, true
	for i := range m.n {
		if m.cfg.Kinds[i] == regularK {
			regs++
			allDone = allDone && done(i)
			allSucceeded = allSucceeded && s.ctr[i].State == fc.ExitedSuccess
		}
	}
	if regs > 0 && allDone {
		if allSucceeded {
			return fc.PodPhaseSucceeded
		}
		return fc.PodPhaseFailed
	}
	for i := range m.n {
		if s.ctr[i].State == fc.Running {
			return fc.PodPhaseRunning
		}
	}
	return s.phase
}

// settle is Settle: the variables s (containers, sandbox, readiness,
// termination as the step left them) get their phase, and a terminal
// phase makes the pod terminate.
func (m *model) settle(s state) state {
	s.phase = m.phaseOf(&s)
	s.terminating = s.terminating || terminal(s.phase)
	return s
}

// Input is one disjunct of tla/ContainerLifecycle.tla's Next: an event
// for container Ctr (with an exit code for Exit), or a pod-level action
// (Ctr -1).
type Input struct {
	Ctr   int
	Event fc.Event
	Code  fc.ExitCode // Exit only
	Pod   PodAction   // Ctr -1 only
}

// PodAction is a pod-level action of the model.
type PodAction uint8

const (
	SandboxDies PodAction = iota + 1
	CreateSandbox
	Terminate
)

func (in Input) String() string {
	switch {
	case in.Ctr < 0:
		return [...]string{"", "SandboxDies", "CreateSandbox", "Terminate"}[in.Pod]
	case in.Event == fc.Exit:
		return fmt.Sprintf("c%d Exit(%s)", in.Ctr+1, in.Code)
	}
	return fmt.Sprintf("c%d %s", in.Ctr+1, in.Event)
}

// decisions are DecisionEvents, in table order.
var decisions = []fc.Event{fc.Start, fc.Begin, fc.Restart, fc.BackoffDone, fc.Replace, fc.Stop, fc.Purge}

// inputs lists the configuration's inputs in a fixed order: per container
// its decisions, exits, the startup probe, then (when the configuration
// sends them) liveness failures, long runs and spec changes; then the
// pod-level actions.
func (m *model) inputs() []Input {
	var out []Input
	for i := range m.n {
		for _, ev := range decisions {
			out = append(out, Input{Ctr: i, Event: ev})
		}
		for _, code := range m.cfg.ExitCodes[i] {
			out = append(out, Input{Ctr: i, Event: fc.Exit, Code: code})
		}
		out = append(out, Input{Ctr: i, Event: fc.StartupOK})
		if m.cfg.Probes {
			out = append(out, Input{Ctr: i, Event: fc.LivenessFail}, Input{Ctr: i, Event: fc.StartupFail}, Input{Ctr: i, Event: fc.RanLong})
		}
		if m.cfg.SpecChanges {
			out = append(out, Input{Ctr: i, Event: fc.SpecChange})
		}
	}
	return append(out, Input{Ctr: -1, Pod: SandboxDies}, Input{Ctr: -1, Pod: CreateSandbox}, Input{Ctr: -1, Pod: Terminate})
}

// initial is Init.
func (m *model) initial() state {
	return state{ready: true, phase: fc.PodPhasePending}
}

// next is the successor Next gives for input in from s; false when the
// action is not enabled there. A container's step is fsm/container.Fire
// with the container's facts (and the exit code for Exit); a Fire error
// other than a refused decision is returned.
func (m *model) next(s *state, in Input) (state, bool, error) {
	t := *s
	if in.Ctr < 0 {
		switch in.Pod {
		case SandboxDies:
			if !s.ready || s.sandbox >= m.cfg.MaxSandbox || s.terminating {
				return t, false, nil
			}
			for i := range m.n {
				tr, err := m.fire(s.ctr[i].State, s.ctr[i].Vars, fc.SandboxDied, m.factsOf(i, s))
				if err != nil {
					return t, false, fmt.Errorf("container %d: %w", i+1, err)
				}
				t.ctr[i] = ctr{tr.To, tr.After}
			}
			t.ready = false
		case CreateSandbox:
			if s.ready || s.sandbox >= m.cfg.MaxSandbox || !m.recreateSandbox(fc.NotCreated, fc.Vars{}, m.factsOf(0, s)) {
				return t, false, nil
			}
			t.sandbox, t.ready = s.sandbox+1, true
		case Terminate:
			if !m.cfg.Terminations || s.terminating {
				return t, false, nil
			}
			t.terminating = true
		}
		return m.settle(t), true, nil
	}
	i := in.Ctr
	p := m.factsOf(i, s)
	switch in.Event {
	case fc.Exit:
		p.Code = in.Code
	case fc.LivenessFail, fc.StartupFail, fc.RanLong, fc.SpecChange:
		if s.terminating {
			return t, false, nil // the terminating pod worker no longer probes or replaces containers
		}
	}
	tr, err := m.fire(s.ctr[i].State, s.ctr[i].Vars, in.Event, p)
	if err != nil {
		if in.Event.Decision() {
			return t, false, nil // no row takes this decision here
		}
		return t, false, fmt.Errorf("%s: %w", in, err)
	}
	t.ctr[i] = ctr{tr.To, tr.After}
	return m.settle(t), true, nil
}

// format renders a state for a counterexample.
func (m *model) format(s *state) string {
	var b strings.Builder
	for i := range m.n {
		c := &s.ctr[i]
		fmt.Fprintf(&b, "c%d=%s{gen=%d", i+1, c.State, c.Vars.Gen)
		if c.Vars.Started {
			b.WriteString(" started")
		}
		if c.Vars.Code != fc.ExitCodeNone {
			fmt.Fprintf(&b, " code=%s", c.Vars.Code)
		}
		if c.Vars.Backoff != 0 {
			fmt.Fprintf(&b, " backoff=%d", c.Vars.Backoff)
		}
		if c.Vars.Replacing {
			b.WriteString(" replacing")
		}
		b.WriteString("} ")
	}
	fmt.Fprintf(&b, "sandbox=%d ready=%v terminating=%v phase=%s", s.sandbox, s.ready, s.terminating, s.phase)
	return b.String()
}
