package explore

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/fsm"
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
}

// errProtocol marks a violation of the effect protocol.
const errProtocol = "EffectProtocol"

func (w *world) newSim(obs fsm.Observer) *sim {
	return &sim{core: worker.NewCore(worker.Options{Observer: obs, Logger: discardLogger, CheckedFSM: true})}
}

// clone copies the simulation: the Core's Clone, and the shell's arrays
// (the waiter lists shared clipped: an append on either side copies, and
// release copies before it deletes).
func (s *sim) clone() *sim {
	c := *s
	c.core = s.core.Clone()
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
	core, effects := dst.core, dst.effects
	*dst = *s
	dst.core = s.core.CopyInto(core)
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
func (w *world) apply(s *sim, in Input) (bool, error) {
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
		_ = s.core.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodKill, Pod: w.pods[podKey{pod: i, grace: fsm.NoGrace}], KillPodOptions: w.kills[killKey{in.Evict, in.Grace}]},
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
		sh.Timer = false
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
		case worker.StopTimer:
			s.shell[p].Timer = false
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
		default:
			return fmt.Errorf("%s: unknown effect %s", errProtocol, e.Kind)
		}
	}
	if handed != 0 {
		s.open[i] = append(s.open[i], handed)
	}
	return nil
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
