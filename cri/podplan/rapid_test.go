package podplan

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"pgregory.net/rapid"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/fsm/container"
	"github.com/podlife/podlife/internal/crifake"
	"github.com/podlife/podlife/spec"
	cspec "github.com/podlife/podlife/spec/container"
	ctrace "github.com/podlife/podlife/trace/container"
)

// TestPlanAgainstTheTable drives the plan against random runtime
// histories: a model runtime whose instances exit with random codes, fail
// their probes or pass their startup probe, whose sandbox dies, whose
// containers' images change, and which carries out each plan (sometimes
// leaving an instance created and not started). Every sync checks each
// action against the table: its rows, replayed from the container's
// observed state, are enabled one after the other and their effects are
// the action's runtime calls; the table's invariants and step properties
// hold on every row fired. Across syncs it checks the history itself: in
// each sandbox, init containers start in order, each after the one before
// completed (or, a sidecar, started), regular containers after the init
// phase, and a Never container without a matching rule is not started
// twice unless its spec changed. The plan's steps, recorded as a trace of
// its decisions (trace/container), replay through the table.
func TestPlanAgainstTheTable(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newModel(rt)
		defer m.checkTrace(rt)
		for step := range rapid.IntRange(1, 40).Draw(rt, "steps") {
			switch ev := rapid.SampledFrom([]string{"sync", "sync", "sync", "exit", "probe", "startupOK", "sandboxDies", "specChange"}).Draw(rt, fmt.Sprintf("event%d", step)); ev {
			case "sync":
				m.sync(rt)
			case "exit":
				if c := m.pickRunning(rt); c != nil {
					c.State, c.ExitCode, c.FinishedAt = crifake.Exited, rapid.SampledFrom([]int32{0, 1, 3}).Draw(rt, "code"), m.tick()
				}
			case "probe":
				if c := m.pickRunning(rt); c != nil && m.probed(c) {
					kind := prober.Liveness
					if !m.started[c.Id] {
						kind = prober.Startup
					}
					m.failed[c.Id] = kind
				}
			case "startupOK":
				if c := m.pickRunning(rt); c != nil && m.failed[c.Id] == 0 {
					m.started[c.Id] = true
				}
			case "sandboxDies":
				if len(m.view.Sandboxes) > 0 {
					m.view.Sandboxes[0].State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
				}
			case "specChange":
				// Only the images of regular containers and sidecars change.
				var cs []*v1.Container
				for i := range m.pod.Spec.Containers {
					cs = append(cs, &m.pod.Spec.Containers[i])
				}
				for i := range m.pod.Spec.InitContainers {
					if cri.IsSidecar(&m.pod.Spec.InitContainers[i]) {
						cs = append(cs, &m.pod.Spec.InitContainers[i])
					}
				}
				c := rapid.SampledFrom(cs).Draw(rt, "changed")
				c.Image += "+"
				m.changed[c.Name] = true
			}
		}
	})
}

// model is the runtime of one pod, and what the checks remember of its
// history.
type model struct {
	pod     *v1.Pod
	view    *cri.PodRuntime
	now     int64
	started map[string]bool        // instances past their startup probe
	failed  map[string]prober.Kind // instances whose probe failed
	changed map[string]bool        // containers whose spec changed at least once
	backoff bool                   // the back-off of every container is over
	ids     int
	trace   bytes.Buffer // the plan's decisions, as trace/container records them
	rec     *ctrace.Recorder
}

// record writes the plan's steps as one sync of the trace.
func (m *model) record(plan Actions) {
	if m.rec == nil {
		m.rec = ctrace.NewRecorder(&m.trace)
	}
	sync := m.rec.Begin(m.pod.UID)
	for _, s := range plan.Steps {
		sync.Record(s.Container, s.Event, s.Params, s.Transition)
	}
}

// checkTrace replays the recorded decisions through the table.
func (m *model) checkTrace(rt *rapid.T) {
	if m.rec.Lines() == 0 {
		return
	}
	lines, err := ctrace.Read(&m.trace)
	if err == nil {
		err = ctrace.Check(lines)
	}
	if err != nil {
		rt.Fatalf("the plan's decisions as a trace: %v", err)
	}
}

func newModel(rt *rapid.T) *model {
	var inits []crifake.Init
	for i := range rapid.IntRange(0, 2).Draw(rt, "inits") {
		inits = append(inits, crifake.Init{Name: fmt.Sprintf("i%d", i), Sidecar: rapid.Bool().Draw(rt, fmt.Sprintf("sidecar%d", i))})
	}
	var ctrs []crifake.Ctr
	for i := range rapid.IntRange(1, 2).Draw(rt, "regulars") {
		c := crifake.Ctr{Name: fmt.Sprintf("c%d", i)}
		if rapid.Bool().Draw(rt, fmt.Sprintf("rules%d", i)) {
			c.Restart, c.Rules = v1.ContainerRestartPolicyNever, crifake.RestartOn(3)
		}
		ctrs = append(ctrs, c)
	}
	policy := rapid.SampledFrom([]v1.RestartPolicy{always, onFailure, never}).Draw(rt, "policy")
	return &model{
		pod:  crifake.WithInits(crifake.MakePod("p", policy, ctrs...), inits...),
		view: crifake.RuntimePod(nil), started: map[string]bool{}, failed: map[string]prober.Kind{}, changed: map[string]bool{},
	}
}

func (m *model) tick() int64 { m.now++; return m.now }

func (m *model) input() *Input {
	return &Input{Pod: m.pod, View: m.view, Now: time.Unix(0, m.now),
		Started:     func(_ *v1.Container, cur *runtimeapi.ContainerStatus) bool { return m.started[cur.Id] },
		FailedProbe: func(id string) (prober.Kind, bool) { k, ok := m.failed[id]; return k, ok },
		Backoff: func(string, time.Time) time.Duration {
			if m.backoff {
				return 0
			}
			return 10 * time.Second
		},
	}
}

// probed reports whether c's container has probes the table models (a
// sidecar's or a regular container's).
func (m *model) probed(c *runtimeapi.ContainerStatus) bool {
	spec := cri.ContainerSpec(m.pod, c.Metadata.Name)
	return spec != nil && (cri.IsSidecar(spec) || slices.ContainsFunc(m.pod.Spec.Containers, func(x v1.Container) bool { return x.Name == spec.Name }))
}

func (m *model) pickRunning(rt *rapid.T) *runtimeapi.ContainerStatus {
	var rs []*runtimeapi.ContainerStatus
	for _, c := range m.view.Containers {
		if c.State == crifake.Running && len(m.view.Sandboxes) > 0 && m.view.SandboxOf[c.Id] == m.view.Sandboxes[0].Id {
			rs = append(rs, c)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	return rapid.SampledFrom(rs).Draw(rt, "instance")
}

// sync plans one sync, checks the plan, and carries it out.
func (m *model) sync(rt *rapid.T) {
	m.backoff = rapid.Bool().Draw(rt, "backoffOver")
	in := m.input()
	plan := ComputePodActions(in)
	m.record(plan)
	if plan.Terminal {
		return
	}
	sbID := plan.SandboxID
	if plan.CreateSandbox {
		sbID = pendingSandbox
	}
	obs := decided(in, sbID, plan.CreateSandbox)
	byName := map[string]*observed{}
	for i := range obs {
		byName[obs[i].spec.Name] = &obs[i]
	}
	acts := slices.Concat(plan.Ephemeral, plan.Init, plan.Containers)
	rt.Logf("plan: %s", summary(plan))
	for _, act := range acts {
		checkCourse(rt, byName[act.Spec.Name], act)
	}
	// Carry the plan out.
	if plan.CreateSandbox {
		for _, c := range plan.KillPrevious {
			m.kill(c)
		}
		sb := &runtimeapi.PodSandbox{Id: fmt.Sprintf("s%d", plan.SandboxAttempt), State: runtimeapi.PodSandboxState_SANDBOX_READY,
			CreatedAt: m.tick(), Metadata: &runtimeapi.PodSandboxMetadata{Attempt: plan.SandboxAttempt}}
		m.view.Sandboxes = append([]*runtimeapi.PodSandbox{sb}, m.view.Sandboxes...)
		sbID = sb.Id
	}
	for _, act := range acts {
		if act.Kill != nil {
			m.kill(act.Kill)
		}
		switch act.Then {
		case ThenCreate, ThenRestart:
			m.create(rt, sbID, act.Spec)
		case ThenStart:
			m.checkStart(rt, sbID, act.Spec)
			act.Created.State, act.Created.StartedAt = crifake.Running, m.tick()
		}
	}
}

func (m *model) kill(c *runtimeapi.ContainerStatus) {
	if c.State != crifake.Exited {
		c.State, c.ExitCode, c.FinishedAt = crifake.Exited, 137, m.tick()
	}
}

// create adds an instance of c to the sandbox: running, or, now and
// then, only created (its start failed).
func (m *model) create(rt *rapid.T, sbID string, c *v1.Container) {
	m.checkStart(rt, sbID, c)
	m.ids++
	state := crifake.Running
	if rapid.IntRange(0, 9).Draw(rt, "startFails") == 0 {
		state = crifake.Created
	}
	st := &runtimeapi.ContainerStatus{Id: fmt.Sprintf("%s-%d", c.Name, m.ids), Metadata: &runtimeapi.ContainerMetadata{Name: c.Name},
		State: state, CreatedAt: m.tick(), Annotations: map[string]string{cri.ContainerHashAnnotation: ContainerHash(c)}}
	m.view.Containers = append([]*runtimeapi.ContainerStatus{st}, m.view.Containers...)
	m.view.SandboxOf[st.Id] = sbID
}

// checkStart checks the history before container c starts (again) in the
// sandbox: the init order, the regular containers after the init phase,
// and no second run of a Never container.
func (m *model) checkStart(rt *rapid.T, sbID string, c *v1.Container) {
	inits := m.pod.Spec.InitContainers
	regularRan := false
	for i := range m.pod.Spec.Containers {
		if cur, _ := m.view.Latest(sbID, m.pod.Spec.Containers[i].Name); cur != nil {
			regularRan = true
		}
	}
	// An init container is done once its instance in the sandbox
	// completed; a sidecar once one of its instances there passed its
	// startup probe (the table's Started stays set in a sandbox).
	done := func(i int) bool {
		if cri.IsSidecar(&inits[i]) {
			return slices.ContainsFunc(m.view.Containers, func(c *runtimeapi.ContainerStatus) bool {
				return c.Metadata.Name == inits[i].Name && m.view.SandboxOf[c.Id] == sbID && m.started[c.Id]
			})
		}
		cur, _ := m.view.Latest(sbID, inits[i].Name)
		return cur != nil && cur.State == crifake.Exited && cur.ExitCode == 0
	}
	idx := slices.IndexFunc(inits, func(x v1.Container) bool { return x.Name == c.Name })
	switch {
	case idx > 0 && !regularRan && !done(idx-1):
		rt.Fatalf("init container %s starts in %s before %s is done", c.Name, sbID, inits[idx-1].Name)
	case idx < 0 && !regularRan && len(inits) > 0 && !done(len(inits)-1):
		rt.Fatalf("container %s starts in %s before the init phase is complete", c.Name, sbID)
	}
	if idx < 0 && !m.changed[c.Name] {
		if cur, _ := m.view.Latest(sbID, c.Name); cur != nil && cur.State == crifake.Exited && cur.ExitCode != 137 &&
			!cri.ContainerShouldRestart(&m.pod.Spec, c, cur.ExitCode) {
			rt.Fatalf("container %s runs again in %s after exit %d, which its policy does not restart", c.Name, sbID, cur.ExitCode)
		}
	}
}

// checkCourse replays act's rows from o, the container's observation: each
// must be fired by some event from the state the previous one left, its
// effects must be the action's calls, and the table's invariants and step
// properties must hold on it.
func checkCourse(rt *rapid.T, o *observed, act ContainerAction) {
	if o == nil || len(act.Rows) == 0 {
		rt.Fatalf("action %s has no observed container or no rows (%v)", act, act.Rows)
	}
	s, v := o.state, o.vars
	var effects container.Effect
	for _, row := range act.Rows {
		var tr container.Transition
		found := false
		for e := container.Event(0); e.String() != "Event(invalid)"; e++ {
			if t, err := container.Fire(s, v, e, o.params); err == nil && t.Row == row {
				tr, found = t, true
				break
			}
		}
		if !found {
			rt.Fatalf("action %s: row %s is not enabled in %s %+v, %+v", act, row, s, v, o.params)
		}
		checkProperties(rt, act, tr, o.params)
		effects |= tr.Effects
		s, v = tr.To, tr.After
	}
	wantKill, wantCreate := act.Kill != nil, act.Then == ThenCreate || act.Then == ThenRestart
	if effects.Has(container.KillInstance) != wantKill || effects.Has(container.CreateInstance) != wantCreate ||
		effects.Has(container.StartInstance) != (wantCreate || act.Then == ThenStart) ||
		(act.Then == ThenBackOff) != (effects.Has(container.WaitBackoff) && !wantCreate) {
		rt.Fatalf("action %s: its rows %v have the effects %s", act, act.Rows, effects)
	}
}

// checkProperties evaluates the container table's invariants, before and
// after the step, and its step properties on the step.
func checkProperties(rt *rapid.T, act ContainerAction, tr container.Transition, p container.Params) {
	before, after := env(tr.From, tr.Before, p), env(tr.To, tr.After, p)
	before.Next = after
	for _, prop := range cspec.Properties {
		switch prop.Kind {
		case spec.Invariant:
			if prop.Holds.Eval(before) == 0 || prop.Holds.Eval(after) == 0 {
				rt.Fatalf("action %s, row %s: invariant %s fails", act, tr.Row, prop.Name)
			}
		case spec.StepProperty:
			if prop.Holds.Eval(before) == 0 {
				rt.Fatalf("action %s, row %s: step property %s fails", act, tr.Row, prop.Name)
			}
		}
	}
}

// env is the container's state, record and parameters as the spec's
// expressions read them.
func env(s container.State, v container.Vars, p container.Params) *spec.Env {
	e := &spec.Env{State: int(s), Vars: make([]int, len(cspec.Vars)), Params: make([]int, len(cspec.Params))}
	b := func(x bool) int {
		if x {
			return 1
		}
		return 0
	}
	for _, x := range []struct {
		v   *spec.Var
		val int
	}{{cspec.Gen, v.Gen}, {cspec.Started, b(v.Started)}, {cspec.Code, int(v.Code)}, {cspec.BackoffLevel, v.Backoff}, {cspec.Replacing, b(v.Replacing)}} {
		e.Vars[spec.VarIndex(x.v)] = x.val
	}
	for _, x := range []struct {
		p   *spec.Param
		val int
	}{
		{cspec.PKind, int(p.Kind)}, {cspec.PPolicy, int(p.Policy)}, {cspec.PRule, b(p.Rule)}, {cspec.PCode, int(p.Code)},
		{cspec.PSandbox, p.Sandbox}, {cspec.PSandboxReady, b(p.SandboxReady)}, {cspec.PTerminating, b(p.Terminating)}, {cspec.PFirst, b(p.First)},
		{cspec.PBeforeKind, int(p.BeforeKind)}, {cspec.PBeforeState, int(p.BeforeState)}, {cspec.PBeforeGen, p.BeforeGen}, {cspec.PBeforeStarted, b(p.BeforeStarted)},
		{cspec.PMainSeen, b(p.MainSeen)}, {cspec.PRegularsStopped, b(p.RegularsStopped)}, {cspec.PLaterSidecarsStopped, b(p.LaterSidecarsStopped)},
		{cspec.PPhase, int(p.Phase)}, {cspec.PPodNever, b(p.PodNever)}, {cspec.PAnyRan, b(p.AnyRan)},
	} {
		e.Params[spec.ParamIndex(x.p)] = x.val
	}
	return e
}
