package explore

import (
	"fmt"
	"slices"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/spec"
)

// errRefinement names a step on which the core's successor is not the one
// the model gives for the same input (reported as a property violation).
const errRefinement = "Refinement"

// table indexes the lifecycle table for the model's steps: the table's own
// expressions, as trace.Check evaluates them, not the generated guards the
// core runs.
var table = spec.NewIndex(spec.Table)

// modelStep is tla/PodLifecycle.tla's Step for one pod: the row that
// fires (nil: none, the model's NoStep), the record after it.
type modelStep struct {
	row   *spec.Row
	state fsm.State
	vars  fsm.Vars
}

func (m *modelStep) effects() spec.Effect {
	if m.row == nil {
		return 0
	}
	return m.row.Effects
}

// refiner evaluates the model's Next for one input; its buffers are reused
// (one per lane: a simulation and its clones share it).
type refiner struct {
	env           spec.Env
	from, to, got snapshot
	// fromViews, toViews: buffers of world.checkEffects.
	fromViews, toViews []podView
	// effects are the effects of the row that fired for each pod on the
	// last step (0: none fired).
	effects [MaxPods]spec.Effect
}

func newRefiner() *refiner {
	return &refiner{env: spec.Env{Vars: make([]int, len(spec.Vars)), Params: make([]int, len(spec.Params))}}
}

func varsToInts(v *fsm.Vars, out []int) {
	b := func(x bool) int {
		if x {
			return 1
		}
		return 0
	}
	copy(out, []int{b(v.Static), b(v.HasConfig), b(v.Started), b(v.Deleted), b(v.Evicted), b(v.RestartRequested),
		b(v.ObservedRuntime), int(v.Grace), int(v.Pending), int(v.InFlight), b(v.Waiters)})
}

func intsToVars(x []int) fsm.Vars {
	return fsm.Vars{Static: x[0] == 1, HasConfig: x[1] == 1, Started: x[2] == 1, Deleted: x[3] == 1, Evicted: x[4] == 1,
		RestartRequested: x[5] == 1, ObservedRuntime: x[6] == 1, Grace: int64(x[7]), Pending: fsm.Pending(x[8]),
		InFlight: fsm.InFlight(x[9]), Waiters: x[10] == 1}
}

// params are the model's parameters of an input (UpdateParams,
// KillParams, RuntimeKillParams, SyncParams), world facts excluded.
type params struct {
	static, deleting, terminalPhase, runtimeTerminal, notify, evict, orphan bool
	graceOverride, specGrace                                                int64
}

// step is the model's Step(ev, rec[p], WithWorld(p, e)) in snapshot s.
func (r *refiner) step(w *world, s *snapshot, p int, ev fsm.Event, e params) modelStep {
	pod := &s.pods[p]
	varsToInts(&pod.Vars, r.env.Vars)
	b := func(x bool) int {
		if x {
			return 1
		}
		return 0
	}
	slotFree, first := true, false
	if pod.Vars.Static {
		for q := range s.pods {
			o := &s.pods[q]
			if q != p && o.Vars.Static && o.Vars.Started && o.State.MayHoldSlot() {
				slotFree = false
			}
		}
		first = len(s.waiting) > 0 && s.waiting[0] == p
	}
	copy(r.env.Params, []int{b(e.static), b(e.deleting), b(e.terminalPhase), b(e.runtimeTerminal), int(e.graceOverride),
		int(e.specGrace), b(e.notify), b(e.evict), b(e.orphan), b(slotFree), b(first)})
	row := table.Enabled(spec.State(pod.State), spec.Event(ev), &r.env)
	if row == nil {
		return modelStep{}
	}
	return modelStep{row: row, state: fsm.State(row.To), vars: intsToVars(row.Apply(&r.env))}
}

func live(st fsm.State) bool { return st.HasRecord() && !st.IsFinished() }

// shellAfter is the model's ShellAfter: pod p's shell after step m, notify
// that the input carried a kill channel, t0 the timer before the effects.
func shellAfter(s *snapshot, p int, m *modelStep, notify, t0 bool) shell {
	before := &s.pods[p]
	if !live(before.State) && !live(m.state) {
		return shell{Loop: before.Loop, Timer: t0, Channels: before.Channels}
	}
	eff := m.effects()
	ends := eff.Has(spec.Exit) || m.state == fsm.Absent
	queued := m.vars.Pending == fsm.PendingQueued
	out := shell{Loop: before.Loop || (!ends && queued && m.vars.InFlight == fsm.InFlightNone)}
	out.Timer = !ends && (t0 || (!queued && (eff.Has(spec.Resync) || eff.Has(spec.Backoff))))
	if !ends && !eff.Has(spec.CloseWaiters) {
		out.Channels = before.Channels
		if notify && eff.Has(spec.KeepNotify) {
			out.Channels++
		}
	}
	return out
}

// take is the model's Take: pod p takes step m with shell a, into r.to.
func (r *refiner) take(s *snapshot, p int, m *modelStep, a shell) {
	before := &s.pods[p]
	r.to.pods[p] = podState{State: m.state, Vars: m.vars, shell: a}
	if m.row == nil {
		r.to.pods[p] = podState{shell: a} // NoStep's next is the empty record
	}
	static := before.Vars.Static || m.vars.Static
	switch {
	case static && before.State != fsm.Waiting && m.state == fsm.Waiting:
		r.to.waiting = append(r.to.waiting, p)
	case static && before.State == fsm.Waiting && m.state != fsm.Waiting:
		r.to.waiting = slices.DeleteFunc(r.to.waiting, func(q int) bool { return q == p })
	}
	r.effects[p] = m.effects()
}

// next computes, into r.to, the successor the model (tla/PodLifecycle.tla's
// Next, the table evaluated by its own expressions) gives for input in from
// s; it reports false when the model offers no such step.
func (r *refiner) next(w *world, s *snapshot, in Input) bool {
	r.to.pods = append(r.to.pods[:0], s.pods...)
	r.to.waiting = append(r.to.waiting[:0], s.waiting...)
	r.to.synced = s.synced
	r.effects = [MaxPods]spec.Effect{}
	ev := w.events[in.Event]
	if in.Pod < 0 {
		for p := range s.pods {
			m := r.step(w, s, p, fsm.SyncKnownPods, params{orphan: !slices.Contains(in.Desired, p), graceOverride: fsm.NoGrace, specGrace: w.podGrace(s, p)})
			r.to.pods[p] = podState{State: m.state, Vars: m.vars, shell: shellAfter(s, p, &m, false, s.pods[p].Timer)}
			r.effects[p] = m.effects()
		}
		r.to.waiting = slices.DeleteFunc(r.to.waiting, func(q int) bool { return r.to.pods[q].State != fsm.Waiting })
		r.to.synced = true
		return true
	}
	p, pod := in.Pod, &s.pods[in.Pod]
	static := w.cfg.isStatic(p)
	deliver := func(e params) bool {
		m := r.step(w, s, p, ev, e)
		if m.row == nil {
			return false
		}
		r.take(s, p, &m, shellAfter(s, p, &m, e.notify, pod.Timer))
		return true
	}
	switch ev {
	case fsm.Create, fsm.Update:
		return deliver(params{static: static, deleting: in.Deleting, terminalPhase: in.TerminalPhase, runtimeTerminal: in.RuntimeTerminal,
			graceOverride: in.Grace, specGrace: w.cfg.SpecGrace})
	case fsm.Kill:
		return pod.Channels < w.cfg.KillChannels &&
			deliver(params{static: static, evict: in.Evict, graceOverride: in.Grace, specGrace: w.cfg.SpecGrace, notify: true})
	case fsm.RuntimeKill:
		return deliver(params{graceOverride: 1, specGrace: w.podGrace(s, p)})
	case fsm.RuntimeUpdate:
		return deliver(params{graceOverride: fsm.NoGrace})
	case fsm.Dequeue:
		if !pod.Loop || pod.Vars.InFlight != fsm.InFlightNone {
			return false
		}
		m := r.step(w, s, p, ev, params{graceOverride: fsm.NoGrace})
		if m.row == nil {
			r.to.pods[p].Loop = false
			return true
		}
		a := shellAfter(s, p, &m, false, pod.Timer)
		a.Loop = m.row.Effects.Has(spec.Start)
		r.take(s, p, &m, a)
		return true
	case fsm.Requeue:
		if !pod.Timer {
			return false
		}
		if !pod.State.HasRecord() {
			r.to.pods[p].Timer = false
			return true
		}
		m := r.step(w, s, p, ev, params{graceOverride: fsm.NoGrace})
		r.take(s, p, &m, shellAfter(s, p, &m, false, false))
		return true
	default: // an outcome of the sync call in flight
		if pod.Vars.InFlight == fsm.InFlightNone {
			return false
		}
		return deliver(params{graceOverride: fsm.NoGrace})
	}
}

// podGrace is the model's PodGrace: the spec grace of a pod whose config is
// known.
func (w *world) podGrace(s *snapshot, p int) int64 {
	if s.pods[p].Vars.HasConfig {
		return w.cfg.SpecGrace
	}
	return 0
}

// refine compares the core's step with the model's: offered is whether
// the explorer took the input, want whether the model offers it (r.next);
// r.got is the core's state after it.
func (r *refiner) refine(w *world, in Input, offered, want bool) error {
	switch {
	case want != offered && offered:
		return fmt.Errorf("%s: %s from\n  %s\nthe core took the input, the model offers no such step", errRefinement, in, &r.from)
	case want != offered:
		return fmt.Errorf("%s: %s from\n  %s\nthe model offers the step (to %s), the core did not take it", errRefinement, in, &r.from, &r.to)
	case offered && r.got.key() != r.to.key():
		return fmt.Errorf("%s: %s from\n  %s\nthe core reached\n  %s\nthe table gives\n  %s", errRefinement, in, &r.from, &r.got, &r.to)
	}
	return nil
}
