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
// a worker loop, an armed timer, which kill completion channels the Core
// holds. The explorer is the Core's shell, so it checks the effects as
// data: a RunLoop while the pod's loop runs, a channel closed twice or
// never handed over, a sync call the record does not show, are protocol
// errors (reported as the property EffectProtocol).
type sim struct {
	core  *worker.Core
	shell [MaxPods]shell
	// open lists, per pod, the completion channels handed to the Core and
	// not closed; the projected state counts them (shell.Channels).
	open    [MaxPods][]chan<- struct{}
	effects []worker.Effect
}

// errProtocol marks a violation of the effect protocol.
const errProtocol = "EffectProtocol"

func (w *world) newSim(obs fsm.Observer) *sim {
	return &sim{core: worker.NewCore(worker.Options{StatusCache: w.cache, Observer: obs, Logger: discardLogger, CheckedFSM: true})}
}

func (s *sim) clone() *sim {
	c := &sim{core: s.core.Clone(), shell: s.shell}
	for i, o := range s.open {
		c.open[i] = slices.Clone(o)
	}
	return c
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
		return true, w.settle(s, -1, nil)
	}
	i, uid := in.Pod, w.cfg.Pods[in.Pod]
	sh := &s.shell[i]
	switch ev {
	case fsm.Create, fsm.Update:
		w.cache.terminal = in.RuntimeTerminal
		_ = s.core.UpdatePod(worker.UpdatePodOptions{UpdateType: updateTypes[ev], Pod: w.pods[podKey{i, in.Deleting, in.TerminalPhase, in.Grace}]})
	case fsm.Kill:
		if len(s.open[i]) >= w.cfg.KillChannels {
			return false, nil
		}
		ch := make(chan struct{})
		kill := &worker.KillPodOptions{CompletedCh: ch, Evict: in.Evict}
		if in.Grace != fsm.NoGrace {
			g := in.Grace
			kill.PodTerminationGracePeriodSecondsOverride = &g
		}
		_ = s.core.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodKill, Pod: w.pods[podKey{pod: i, grace: fsm.NoGrace}], KillPodOptions: kill})
		return true, w.settle(s, i, ch)
	case fsm.RuntimeKill:
		_ = s.core.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodKill, RunningPod: w.runtimePods[i], KillPodOptions: w.runtimeKill})
	case fsm.RuntimeUpdate:
		_ = s.core.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodSync, RunningPod: w.runtimePods[i]}) // rejected, and ignored by every state
	case fsm.Dequeue:
		if !sh.Loop || w.inFlight(s, i) != fsm.InFlightNone {
			return false, nil // no loop between sync calls
		}
		work, ok := s.core.Next(uid)
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
	return true, w.settle(s, i, nil)
}

// inFlight is the sync function the pod's record shows in flight.
func (w *world) inFlight(s *sim, i int) fsm.InFlight {
	r, _ := s.core.Record(w.cfg.Pods[i])
	return r.Vars.InFlight
}

// settle carries out the Core's effects in the simulation's shell. handed is
// the completion channel the input gave pod i, if any: closed at once, or
// kept by the Core until it closes it.
func (w *world) settle(s *sim, i int, handed chan<- struct{}) error {
	s.effects = s.core.TakeEffects(s.effects[:0])
	defer clear(s.effects)
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
			case e.Ch == handed && handed != nil:
				handed = nil // the kill cannot be kept: closed at once
			case !s.release(e.Ch):
				return fmt.Errorf("%s: closed a kill completion channel of %s twice, or one never handed over", errProtocol, e.UID)
			}
		case worker.CancelSync:
			if e.Cancel == nil {
				return fmt.Errorf("%s: CancelSync for %s without a cancel function", errProtocol, e.UID)
			}
		default:
			return fmt.Errorf("%s: unknown effect %s", errProtocol, e.Kind)
		}
	}
	if handed != nil {
		s.open[i] = append(s.open[i], handed)
	}
	return nil
}

// release forgets an open channel; it reports whether it was open.
func (s *sim) release(ch chan<- struct{}) bool {
	for p, o := range s.open {
		if k := slices.Index(o, ch); k >= 0 {
			s.open[p] = slices.Delete(o, k, k+1)
			return true
		}
	}
	return false
}
