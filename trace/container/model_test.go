package container_test

import (
	"math/rand/v2"

	"k8s.io/apimachinery/pkg/types"

	cfsm "github.com/podlife/podlife/fsm/container"
	ctrace "github.com/podlife/podlife/trace/container"
)

// The histories recorded into testdata/ follow the pod model of
// tla/ContainerLifecycle.tla: a pod's containers move only through
// cfsm.Fire, with the pod-level facts that FactsOf computes there, and the
// environment (the runtime's exits, probes, spec changes, the sandbox's
// death and re-creation, the pod's deletion) takes the steps of its Next.
// A random walk picks one enabled step at a time among all pods.

// ctrSpec is one container of a pod; the init order (init containers and
// sidecars) comes first.
type ctrSpec struct {
	name   string
	kind   cfsm.ContainerKind
	policy cfsm.RestartPolicy
	rule   bool
	codes  []cfsm.ExitCode // the exit codes the runtime reports
}

type podSpec struct {
	uid          types.UID
	ctrs         []ctrSpec
	podNever     bool
	maxSandbox   int
	specChanges  bool
	probes       bool
	terminations bool
	// terminateAfter: the pod may be deleted only after this many steps of
	// the walk (a deletion early on would end most histories).
	terminateAfter int
	// dieAfter: the sandbox may die only after this many steps.
	dieAfter int
	// plan: record as a plan does (Recorder.Begin): the kubelet's decisions
	// in one sync per pod, container after container, each as far as its
	// rows go; the runtime's exits and startup successes change records
	// between syncs without a line (the plan observes them); the other
	// inputs in a sync of their own. Without plan every transition is
	// recorded in sync 0.
	plan bool
}

// pod is the model's state of one pod (ContainerLifecycle.tla's variables).
type pod struct {
	spec        *podSpec
	state       []cfsm.State
	vars        []cfsm.Vars
	sandbox     int
	ready       bool
	terminating bool
	phase       cfsm.PodPhase
}

func newPod(s *podSpec) *pod {
	return &pod{spec: s, state: make([]cfsm.State, len(s.ctrs)), vars: make([]cfsm.Vars, len(s.ctrs)), ready: true}
}

func (p *pod) inInitOrder(i int) bool {
	k := p.spec.ctrs[i].kind
	return k == cfsm.ContainerKindInit || k == cfsm.ContainerKindSidecar
}

// before is BeforeOf: the container that gates i, or -1.
func (p *pod) before(i int) int {
	if p.inInitOrder(i) {
		if i > 0 && p.inInitOrder(i-1) {
			return i - 1
		}
		return -1
	}
	last := -1
	for j := range p.spec.ctrs {
		if p.inInitOrder(j) {
			last = j
		}
	}
	return last
}

func (p *pod) live(j int) bool { return p.state[j] == cfsm.Created || p.state[j] == cfsm.Running }

func (p *pod) anyRan() bool {
	for j := range p.state {
		if (p.state[j] != cfsm.NotCreated && p.state[j] != cfsm.Created) || p.vars[j].Code != cfsm.ExitCodeNone {
			return true
		}
	}
	return false
}

// facts is FactsOf(i, ...) for the pod's current state.
func (p *pod) facts(i int) cfsm.Params {
	c := p.spec.ctrs[i]
	f := cfsm.Params{Kind: c.kind, Policy: c.policy, Rule: c.rule, Sandbox: p.sandbox, SandboxReady: p.ready,
		Terminating: p.terminating, Phase: p.phase, PodNever: p.spec.podNever, AnyRan: p.anyRan(),
		RegularsStopped: true, LaterSidecarsStopped: true}
	if b := p.before(i); b < 0 {
		f.First = true
	} else {
		f.BeforeKind = p.spec.ctrs[b].kind
		f.BeforeState = cfsm.ContainerState(p.state[b])
		f.BeforeGen = p.vars[b].Gen
		f.BeforeStarted = p.vars[b].Started
	}
	for j, cj := range p.spec.ctrs {
		switch {
		case cj.kind == cfsm.ContainerKindRegular:
			f.MainSeen = f.MainSeen || p.state[j] != cfsm.NotCreated
			f.RegularsStopped = f.RegularsStopped && !p.live(j)
		case cj.kind == cfsm.ContainerKindSidecar && j > i:
			f.LaterSidecarsStopped = f.LaterSidecarsStopped && !p.live(j)
		}
	}
	return f
}

func terminal(ph cfsm.PodPhase) bool {
	return ph == cfsm.PodPhaseSucceeded || ph == cfsm.PodPhaseFailed
}

// settle is Settle: the phase follows the containers (PhaseOf), and a
// terminal phase makes the pod terminate.
func (p *pod) settle() {
	done := func(i int) bool {
		s, v := p.state[i], p.vars[i]
		return v.Gen == p.sandbox && (s == cfsm.ExitedSuccess || s == cfsm.ExitedFailure) && !cfsm.MayRunAgain(s, v, p.facts(i))
	}
	regsDone, regsSucceeded, haveRegs := true, true, false
	initFailed, running := false, false
	for i, c := range p.spec.ctrs {
		switch c.kind {
		case cfsm.ContainerKindRegular:
			haveRegs = true
			regsDone = regsDone && done(i)
			regsSucceeded = regsSucceeded && p.state[i] == cfsm.ExitedSuccess
		case cfsm.ContainerKindInit:
			initFailed = initFailed || (p.state[i] == cfsm.ExitedFailure && done(i))
		}
		running = running || p.state[i] == cfsm.Running
	}
	switch {
	case terminal(p.phase):
	case !p.ready && p.spec.podNever && p.anyRan() && !p.terminating:
		p.phase = cfsm.PodPhaseFailed
	case initFailed:
		p.phase = cfsm.PodPhaseFailed
	case haveRegs && regsDone:
		p.phase = cfsm.PodPhaseFailed
		if regsSucceeded {
			p.phase = cfsm.PodPhaseSucceeded
		}
	case running:
		p.phase = cfsm.PodPhaseRunning
	}
	p.terminating = p.terminating || terminal(p.phase)
}

// step is one enabled step of the model: run fires and records; noop
// says that it is one container's ignored input, which changes nothing.
type step struct {
	run  func(rec *ctrace.Recorder)
	noop bool
}

// fire is Fire(i, ev, e): nil if no row of ev accepts the record and e.
func (p *pod) fire(i int, ev cfsm.Event, e cfsm.Params) *step {
	t, err := cfsm.Fire(p.state[i], p.vars[i], ev, e)
	if err != nil {
		return nil
	}
	noop := t.To == t.From && t.After == t.Before && t.Effects == 0
	return &step{noop: noop, run: func(rec *ctrace.Recorder) {
		var sync *ctrace.Sync
		switch {
		case !p.spec.plan:
		case ev == cfsm.Exit || ev == cfsm.StartupOK:
			rec = nil // observed by the next sync, not recorded
		default:
			sync = rec.Begin(p.spec.uid)
		}
		p.take(rec, sync, i, ev, e)
		p.settle()
	}}
}

// take fires ev for container i and records it in sync, or else in rec's
// sync 0 (neither if both are nil: an input a plan observes).
func (p *pod) take(rec *ctrace.Recorder, sync *ctrace.Sync, i int, ev cfsm.Event, e cfsm.Params) {
	name := p.spec.ctrs[i].name
	var t cfsm.Transition
	var err error
	if sync != nil {
		t, err = sync.Fire(name, p.state[i], p.vars[i], ev, e)
	} else {
		t, err = rec.Fire(p.spec.uid, name, p.state[i], p.vars[i], ev, e)
	}
	if err != nil {
		panic(err) // the caller checked that a row fires
	}
	p.state[i], p.vars[i] = t.To, t.After
}

// planOrder is the order in which a plan's sync tries the decisions.
var planOrder = []cfsm.Event{cfsm.Purge, cfsm.Start, cfsm.Begin, cfsm.Replace, cfsm.Restart, cfsm.BackoffDone, cfsm.Stop}

// planSync is one sync of a plan: every container in order takes the
// decisions its rows allow, one after the other, with the facts of the
// moment; nil if no decision is enabled.
func (p *pod) planSync() *step {
	enabled := func(i int) (cfsm.Event, bool) {
		for _, ev := range planOrder {
			if cfsm.Enabled(p.state[i], p.vars[i], ev, p.facts(i)) {
				return ev, true
			}
		}
		return 0, false
	}
	some := false
	for i := range p.spec.ctrs {
		if _, ok := enabled(i); ok {
			some = true
		}
	}
	if !some {
		return nil
	}
	return &step{run: func(rec *ctrace.Recorder) {
		sync := rec.Begin(p.spec.uid)
		for i := range p.spec.ctrs {
			for range 6 {
				ev, ok := enabled(i)
				if !ok {
					break
				}
				p.take(rec, sync, i, ev, p.facts(i))
				p.settle()
			}
		}
	}}
}

// steps lists the enabled steps of Next.
func (p *pod) steps(taken int) []step {
	var out []step
	add := func(s *step) {
		if s != nil {
			out = append(out, *s)
		}
	}
	if p.spec.plan {
		add(p.planSync())
	}
	for i, c := range p.spec.ctrs {
		for ev := cfsm.Event(0); ev.String() != "Event(invalid)" && !p.spec.plan; ev++ {
			if ev.Decision() {
				add(p.fire(i, ev, p.facts(i)))
			}
		}
		for _, code := range c.codes {
			e := p.facts(i)
			e.Code = code
			add(p.fire(i, cfsm.Exit, e))
		}
		// The other inputs: StartupOK always; while the pod runs, spec
		// changes and the probes' other results (LivenessFail, RanLong,
		// and any the table gains) as the pod allows.
		for ev := cfsm.Event(0); ev.String() != "Event(invalid)"; ev++ {
			switch {
			case ev.Decision() || ev == cfsm.Exit || ev == cfsm.SandboxDied:
			case ev == cfsm.StartupOK:
				add(p.fire(i, ev, p.facts(i)))
			case p.terminating:
			case ev == cfsm.SpecChange:
				if p.spec.specChanges {
					add(p.fire(i, ev, p.facts(i)))
				}
			case p.spec.probes:
				add(p.fire(i, ev, p.facts(i)))
			}
		}
	}
	if p.ready && p.sandbox < p.spec.maxSandbox && !p.terminating && taken >= p.spec.dieAfter {
		// SandboxDies: every container takes SandboxDied with the facts of
		// the state before.
		out = append(out, step{run: func(rec *ctrace.Recorder) {
			facts := make([]cfsm.Params, len(p.spec.ctrs))
			for i := range facts {
				facts[i] = p.facts(i)
			}
			var sync *ctrace.Sync
			if p.spec.plan {
				sync = rec.Begin(p.spec.uid)
			}
			for i := range p.spec.ctrs {
				p.take(rec, sync, i, cfsm.SandboxDied, facts[i])
			}
			p.ready = false
			p.settle()
		}})
	}
	if !p.ready && p.sandbox < p.spec.maxSandbox && cfsm.RecreateSandbox(cfsm.NotCreated, cfsm.Vars{}, p.facts(0)) {
		out = append(out, step{run: func(*ctrace.Recorder) {
			p.sandbox++
			p.ready = true
			p.settle()
		}})
	}
	if p.spec.terminations && !p.terminating && taken >= p.spec.terminateAfter {
		out = append(out, step{run: func(*ctrace.Recorder) {
			p.terminating = true
			p.settle()
		}})
	}
	return out
}

// walk takes up to n random steps of the pods (fewer if none is enabled)
// and records the container transitions into rec. Three times in four it
// picks among the steps that change something and once among the ignored
// inputs, so that these (most of the enabled steps) do not drown the
// history.
func walk(seed uint64, n int, rec *ctrace.Recorder, specs ...*podSpec) {
	r := rand.New(rand.NewPCG(seed, 0))
	pods := make([]*pod, len(specs))
	for i, s := range specs {
		pods[i] = newPod(s)
	}
	for taken := range n {
		var all []step
		for _, p := range pods {
			all = append(all, p.steps(taken)...)
		}
		if len(all) == 0 {
			return
		}
		var busy, noops []step
		for _, s := range all {
			if s.noop {
				noops = append(noops, s)
			} else {
				busy = append(busy, s)
			}
		}
		if len(busy) > 0 && (len(noops) == 0 || r.IntN(4) > 0) {
			all = busy
		} else {
			all = noops
		}
		all[r.IntN(len(all))].run(rec)
	}
}
