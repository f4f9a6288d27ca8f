package explore

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/spec"
	"github.com/podlife/podlife/worker"
)

// sim is one explored state of the engine: the Core, and its shell as the
// explorer carries out the Core's effects (worker.Effect): which pods have
// a worker loop, an armed timer, which kill waiters the Core holds, which
// hold a sync context. The explorer is the Core's shell, so it checks the
// effects as data: a RunLoop while the pod's loop runs, a waiter closed
// twice or never handed over, a CancelSync for a pod that got no Work
// since its last one, a sync call the record does not show, are protocol
// errors (reported as the property EffectProtocol).
type sim struct {
	core  *worker.Core
	shell [MaxPods]shell
	// open lists, per pod, the waiters handed to the Core and not closed;
	// the projected state counts them (shell.Channels).
	open [MaxPods][]worker.WaiterID
	// lastWaiter numbers the waiters this simulation's lineage handed out.
	lastWaiter worker.WaiterID
	// syncing: the pod got a Work since its last CancelSync (a shell holds
	// a sync context for it). Not part of the spec state.
	syncing [MaxPods]bool
	effects []worker.Effect
	// ref evaluates the model's step for every input (refinement); a
	// simulation and its clones share it (one lane's).
	ref *refiner
	// timers is the engine's own timer queue (PodWorkers'), carrying out
	// ArmTimer and StopTimer; armed is the due time (a count of ArmTimers
	// in this lineage, clock) of each pod's live arming, 0 when none.
	timers *worker.TimerQueue
	clock  int64
	armed  [MaxPods]int64
	// hist holds the explorer's own shell variables (spec.Var.Explorer);
	// cancelled lists the pods that got a CancelSync on the current step.
	hist      history
	cancelled [MaxPods]bool
}

// history is what the explorer's own shell variables hold for each pod
// (see spec.CancelOwed, StaleTimer, SyncGrace, AskedGrace). They are not
// part of the spec state: the properties that read them are checked on
// every input the explorer applies, along the paths it takes.
type history struct {
	cancelOwed, staleTimer [MaxPods]bool
	syncGrace, askedGrace  [MaxPods]int
}

// errProtocol marks a violation of the effect protocol; errPanic an input
// on which the engine panicked; errBookkeeping the records' bookkeeping
// out of step with its definitions (fsm.Machine.CheckBookkeeping).
const (
	errProtocol    = "EffectProtocol"
	errPanic       = "EnginePanic"
	errBookkeeping = "RecordBookkeeping"
)

func (w *world) newSim(obs fsm.Observer) *sim {
	return &sim{core: worker.NewCore(worker.Options{Observer: obs, Logger: discardLogger, CheckedFSM: true}), ref: newRefiner(),
		timers: worker.NewTimerQueue()}
}

// clone copies the simulation: the Core's Clone, and the shell's arrays
// (the waiter lists shared clipped: an append on either side copies, and
// release copies before it deletes).
func (s *sim) clone() *sim {
	c := *s
	c.core = s.core.Clone()
	c.timers = s.timers.CopyInto(nil)
	for i, o := range s.open {
		c.open[i] = slices.Clip(o)
	}
	c.effects = nil
	return &c
}

// cloneInto is clone into dst's core and maps (worker.Core.CopyInto), so
// that resetting the scratch simulation to a parent allocates nothing;
// dst nil is clone.
func (s *sim) cloneInto(dst *sim) *sim {
	if dst == nil {
		return s.clone()
	}
	core, effects, timers := dst.core, dst.effects, dst.timers
	*dst = *s
	dst.core = s.core.CopyInto(core)
	dst.timers = s.timers.CopyInto(timers)
	for i, o := range s.open {
		dst.open[i] = slices.Clip(o)
	}
	dst.effects = effects[:0]
	return dst
}

// apply feeds one input to the simulation, as the engine's shell would: an
// UpdatePod call, the pod's worker loop asking for work (Next), the sync
// call in flight returning (Done), the pod's timer firing, or
// SyncKnownPods; then it carries out the Core's effects. It reports false
// when the model does not offer the input in this state (nothing happened).
// Every input is checked against the model's step (refiner): the core's
// successor must be the one the table's own expressions give, or the step
// violates Refinement.
func (w *world) apply(s *sim, in Input) (offered bool, err error) {
	defer func() {
		if p := recover(); p != nil { // a named violation with its behaviour, not a crash of the explorer
			offered, err = true, fmt.Errorf("%s: the engine panicked on %s: %v", errPanic, in, p)
		}
	}()
	r := s.ref
	w.projectInto(s, &r.from)
	before, syncing := s.hist, s.syncing
	s.hist.staleTimer, s.hist.syncGrace, s.cancelled = [MaxPods]bool{}, [MaxPods]int{}, [MaxPods]bool{}
	offered, err = w.applyCore(s, in)
	if err == nil {
		if berr := s.core.CheckBookkeeping(); berr != nil {
			return true, fmt.Errorf("%s: after %s: %v", errBookkeeping, in, berr)
		}
	}
	if err != nil || !w.refine && len(w.effectProps) == 0 {
		return offered, err
	}
	want := r.next(w, &r.from, in)
	w.projectInto(s, &r.got)
	if !offered {
		s.hist = before
	} else {
		w.record(s, in, &syncing)
		if err := w.checkEffects(before, s); err != nil {
			return true, err
		}
	}
	if w.refine {
		return offered, r.refine(w, in, offered, want)
	}
	return offered, nil
}

// record updates the explorer's own shell variables after input in
// (syncing: which pods held a sync context before it).
func (w *world) record(s *sim, in Input, syncing *[MaxPods]bool) {
	h, r := &s.hist, s.ref
	for p := range w.cfg.Pods {
		switch {
		case s.cancelled[p]:
			h.cancelOwed[p] = false
		case syncing[p] && r.effects[p].Has(spec.Cancel):
			h.cancelOwed[p] = true
		}
	}
	// What the API asks for (a kill's override, a deletion's grace); a
	// housekeeping kill of a known pod asks nothing of it.
	if p := in.Pod; p >= 0 && r.got.pods[p].State.HasRecord() {
		asked := int64(fsm.NoGrace)
		switch w.events[in.Event] {
		case fsm.Kill:
			asked = in.Grace // the smaller of the override and the pod's deletion grace (killPods)
		case fsm.Create, fsm.Update:
			if in.Deleting {
				asked = in.Grace
			}
		}
		if asked != fsm.NoGrace {
			a := int(max(asked, 1)) // a grace of 0 is taken as 1
			if h.askedGrace[p] == 0 || a < h.askedGrace[p] {
				h.askedGrace[p] = a
			}
		}
	}
	for p := range w.cfg.Pods {
		if !r.got.pods[p].State.HasRecord() {
			h.askedGrace[p] = 0 // the next record is another incarnation
		}
	}
}

// checkEffects checks the properties that read the explorer's own shell
// variables on the step from r.from (with history before) to r.got.
func (w *world) checkEffects(before history, s *sim) error {
	if len(w.effectProps) == 0 {
		return nil
	}
	r := s.ref
	r.fromViews = w.viewsInto(r.fromViews, &r.from)
	r.toViews = w.viewsInto(r.toViews, &r.got)
	fill := func(vs []podView, h *history) {
		for p := range vs {
			vs[p].CancelOwed, vs[p].StaleTimer, vs[p].SyncGrace, vs[p].AskedGrace = h.cancelOwed[p], h.staleTimer[p], h.syncGrace[p], h.askedGrace[p]
		}
	}
	fill(r.fromViews, &before)
	fill(r.toViews, &s.hist)
	for _, p := range w.effectProps {
		for i := range r.toViews {
			a := &r.fromViews[i]
			if p.kind == invariant {
				a = &r.toViews[i]
			}
			if !p.holds(a, &r.toViews[i]) {
				return fmt.Errorf("%s violated by %s:\n  before: %s\n  after:  %s%s", p.name, w.cfg.Pods[i], &r.from, &r.got, describeHistory(&before, &s.hist, i))
			}
		}
	}
	return nil
}

func describeHistory(a, b *history, i int) string {
	return fmt.Sprintf("\n  explorer's shell before: cancelOwed=%v staleTimer=%v syncGrace=%d askedGrace=%d\n  explorer's shell after:  cancelOwed=%v staleTimer=%v syncGrace=%d askedGrace=%d",
		a.cancelOwed[i], a.staleTimer[i], a.syncGrace[i], a.askedGrace[i], b.cancelOwed[i], b.staleTimer[i], b.syncGrace[i], b.askedGrace[i])
}

func (w *world) applyCore(s *sim, in Input) (bool, error) {
	ev := w.events[in.Event]
	if in.Pod < 0 {
		desired := make([]*v1.Pod, len(in.Desired))
		for k, i := range in.Desired {
			desired[k] = w.pods[podKey{pod: i, grace: fsm.NoGrace}]
		}
		s.core.SyncKnownPods(desired)
		return true, w.settle(s, -1, 0)
	}
	i, uid := in.Pod, w.cfg.Pods[in.Pod]
	sh := &s.shell[i]
	switch ev {
	case fsm.Create, fsm.Update:
		o := worker.UpdatePodOptions{UpdateType: updateTypes[ev], Pod: w.pods[podKey{i, in.Deleting, in.TerminalPhase, in.Grace}]}
		_ = s.core.UpdatePod(o, worker.UpdateInput{RuntimeTerminal: in.RuntimeTerminal})
	case fsm.Kill:
		if len(s.open[i]) >= w.cfg.KillChannels {
			return false, nil
		}
		s.lastWaiter++
		waiter := s.lastWaiter
		pod := w.pods[podKey{pod: i, grace: fsm.NoGrace}]
		if in.Grace != fsm.NoGrace {
			pod = w.killPods[i]
		}
		_ = s.core.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodKill, Pod: pod, KillPodOptions: w.kills[killKey{in.Evict, in.Grace}]},
			worker.UpdateInput{Waiter: waiter})
		return true, w.settle(s, i, waiter)
	case fsm.RuntimeKill:
		_ = s.core.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodKill, RunningPod: w.runtimePods[i], KillPodOptions: w.runtimeKill}, worker.UpdateInput{})
	case fsm.RuntimeUpdate:
		_ = s.core.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodSync, RunningPod: w.runtimePods[i]}, worker.UpdateInput{}) // rejected, and ignored by every state
	case fsm.Dequeue:
		if !sh.Loop || w.inFlight(s, i) != fsm.InFlightNone {
			return false, nil // no loop between sync calls
		}
		work, ok := s.core.Next(uid)
		if ok {
			s.syncing[i] = true
			if work.GracePeriod != nil {
				s.hist.syncGrace[i] = int(*work.GracePeriod)
			}
		}
		if !ok {
			sh.Loop = false
		} else if got := w.inFlight(s, i); work.Func != got || work.UID != uid {
			return true, fmt.Errorf("%s: Next handed out %s for %s, but the record shows %s in flight", errProtocol, work.Func, work.UID, got)
		}
	case fsm.Requeue:
		if !sh.Timer {
			return false, nil
		}
		if stale := w.fire(s, i); stale >= 0 {
			s.hist.staleTimer[stale] = true // the shell would call Timer for it: NoStaleTimer reports it
			return true, nil
		}
		sh.Timer, s.armed[i] = false, 0
		s.core.Timer(uid)
	default:
		out := outcome[ev]
		f := w.inFlight(s, i)
		if !slices.Contains(out.inFlight, f) {
			return false, nil // nothing of that kind in flight: the model has no such step
		}
		if !sh.Loop {
			return true, fmt.Errorf("%s: %s has %s in flight without a worker loop", errProtocol, uid, f)
		}
		s.core.Done(worker.Work{UID: uid, Func: f}, out.terminal, out.err)
	}
	return true, w.settle(s, i, 0)
}

// inFlight is the sync function the pod's record shows in flight.
func (w *world) inFlight(s *sim, i int) fsm.InFlight {
	r, _ := s.core.Record(w.cfg.Pods[i])
	return r.Vars.InFlight
}

// settle carries out the Core's effects in the simulation's shell. handed is
// the waiter the input gave pod i, if any: closed at once, or kept by the
// Core until it closes it.
func (w *world) settle(s *sim, i int, handed worker.WaiterID) error {
	s.effects = s.core.TakeEffects(s.effects[:0])
	for _, e := range s.effects {
		p := slices.Index(w.cfg.Pods, e.UID)
		if p < 0 && e.Kind != worker.CloseChannel {
			return fmt.Errorf("%s: %s for an unknown pod %q", errProtocol, e.Kind, e.UID)
		}
		switch e.Kind {
		case worker.RunLoop:
			if s.shell[p].Loop {
				return fmt.Errorf("%s: RunLoop for %s, whose worker loop runs", errProtocol, e.UID)
			}
			s.shell[p].Loop = true
		case worker.ArmTimer:
			s.shell[p].Timer = true
			s.clock++
			s.armed[p] = s.clock
			s.timers.Set(e.UID, time.Unix(0, s.clock))
		case worker.StopTimer:
			s.shell[p].Timer = false
			s.armed[p] = 0
			s.timers.Remove(e.UID)
		case worker.CloseChannel:
			switch {
			case e.Waiter == handed && handed != 0:
				handed = 0 // the kill cannot be kept: closed at once
			case !s.release(e.Waiter):
				return fmt.Errorf("%s: closed a kill waiter of %s twice, or one never handed over", errProtocol, e.UID)
			}
		case worker.CancelSync:
			if !s.syncing[p] {
				return fmt.Errorf("%s: CancelSync for %s, which got no Work since its last CancelSync", errProtocol, e.UID)
			}
			s.syncing[p] = false
			s.cancelled[p] = true
		default:
			return fmt.Errorf("%s: unknown effect %s", errProtocol, e.Kind)
		}
	}
	if handed != 0 {
		s.open[i] = append(s.open[i], handed)
	}
	return nil
}

// fire takes pod i's armed timer out of the timer queue, as PodWorkers'
// timer goroutine would once its time came (the model lets any armed timer
// fire first): the live timers of other pods due earlier are put back. It
// returns the pod whose entry the queue handed out instead if that entry
// was stopped or replaced (a stale timer), -1 when it handed out i's.
func (w *world) fire(s *sim, i int) int {
	type entry struct {
		uid types.UID
		due time.Time
	}
	var back []entry
	defer func() {
		for _, e := range back {
			s.timers.Set(e.uid, e.due)
		}
	}()
	for {
		uid, due, ok := s.timers.PopDue(time.Unix(0, s.armed[i]))
		if !ok {
			return i // the queue lost the armed timer
		}
		q := slices.Index(w.cfg.Pods, uid)
		switch {
		case q == i && due.UnixNano() == s.armed[i]:
			return -1
		case q >= 0 && s.armed[q] == due.UnixNano():
			back = append(back, entry{uid, due})
		case q >= 0:
			return q
		default:
			return i
		}
	}
}

// release forgets an open waiter; it reports whether it was open. It
// deletes from a copy: a clone may share the array.
func (s *sim) release(id worker.WaiterID) bool {
	for p, o := range s.open {
		if k := slices.Index(o, id); k >= 0 {
			s.open[p] = slices.Delete(slices.Clone(o), k, k+1)
			return true
		}
	}
	return false
}
