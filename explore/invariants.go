package explore

import (
	"fmt"
	"slices"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/worker"
)

// check is one invariant: a name from tla/PodLifecycle.tla and whether it
// holds.
type check struct {
	name string
	ok   bool
}

// stateInvariants are the spec's state invariants, each labelled as there.
// The query invariants (30 to 34, 37) ask the core's own query methods.
func (w *world) stateInvariants(core *worker.Core, s *snapshot) error {
	holders := 0
	for i, p := range s.pods {
		v, uid := p.Vars, w.cfg.Pods[i]
		known := p.State.HasRecord()
		holds := v.Static && v.Started && p.State.MayHoldSlot()
		if holds {
			holders++
		}
		inWaiting := slices.Contains(s.waiting, i)
		for _, c := range []check{
			{"TypeOK", v.Grace >= 0 && v.Grace <= 15 && (known || v == fsm.Vars{})},
			{"Inv7", !p.State.TerminationStarted() || v.InFlight != fsm.InFlightSyncPod},
			{"Inv8", v.InFlight != fsm.InFlightSyncTerminatedPod || p.State == fsm.Terminated},
			{"Inv13", v.InFlight == fsm.InFlightNone || (known && p.State != fsm.Finished)},
			{"Inv18", v.Pending != fsm.PendingParked || (p.State == fsm.Waiting && v.Static)},
			{"Inv22", (v.Grace == 0 || v.Grace >= 1) && (p.State != fsm.TerminationRequested || v.Grace >= 1)},
			{"Inv26", !v.Waiters || p.State == fsm.TerminationRequested || p.State == fsm.Terminating},
			{"Inv30", !core.IsPodKnownTerminated(uid) || !core.CouldHaveRunningContainers(uid)},
			{"Inv31", core.ShouldPodRuntimeBeRemoved(uid) == !core.CouldHaveRunningContainers(uid)},
			{"Inv33", !known || !core.ShouldPodContainersBeTerminating(uid) || core.IsPodTerminationRequested(uid)},
			{"Inv34", !known || !core.ShouldPodBeFinished(uid) || core.ShouldPodRuntimeBeRemoved(uid)},
			{"Inv39", !(v.Static && v.InFlight == fsm.InFlightSyncPod) || holds},
			{"Inv40", inWaiting == (p.State == fsm.Waiting && v.Static)},
			{"Inv41", !(v.Static && !v.Started) || v.InFlight == fsm.InFlightNone},
		} {
			if !c.ok {
				return fmt.Errorf("%s violated by %s: %s %+v", c.name, uid, p.State, v)
			}
		}
	}
	mirror := core.IsPodForMirrorPodTerminatingByFullName(worker.FullName(podName, podNamespace))
	for _, c := range []check{
		{"Inv37", !mirror || slices.ContainsFunc(s.pods, func(p podState) bool {
			return p.Vars.Static && p.Vars.Started && p.State.TerminationRequested() && !p.State.IsTerminated()
		})},
		{"Inv38", holders <= 1},
		{"Inv40", len(s.waiting) == len(slices.Compact(slices.Clone(s.waiting)))},
	} {
		if !c.ok {
			return fmt.Errorf("%s violated: %s", c.name, s)
		}
	}
	return nil
}

// stepProperties are the spec's properties of steps ([][A]_vars).
func stepProperties(from, to *snapshot) error {
	if from.synced && !to.synced {
		return fmt.Errorf("Inv36 violated: synced went back")
	}
	workType := func(s fsm.State) int {
		switch {
		case s.IsTerminated():
			return 2
		case s.TerminationRequested():
			return 1
		}
		return 0
	}
	for i := range from.pods {
		a, b := from.pods[i], to.pods[i]
		livesOn := a.State.HasRecord() && b.State.HasRecord()
		sameButRestart := func() bool { x := b.Vars; x.RestartRequested = a.Vars.RestartRequested; return x == a.Vars }
		for _, c := range []check{
			{"Inv1", !(livesOn && a.State.TerminationRequested()) || b.State.TerminationRequested()},
			{"Inv5", !livesOn || workType(b.State) >= workType(a.State)},
			{"Inv6", !(a.Vars.InFlight != fsm.InFlightSyncPod && b.Vars.InFlight == fsm.InFlightSyncPod) || b.State == fsm.Running},
			{"Inv9", !(a.Vars.InFlight == fsm.InFlightSyncTerminatingRuntimePod && b.Vars.InFlight == fsm.InFlightNone && b.State != a.State) || b.State == fsm.Removed},
			{"Inv10", b.State != fsm.Running || a.State == fsm.Waiting || a.State == fsm.Running},
			{"Inv11", !(a.State == fsm.Finished && b.State == fsm.Finished) || sameButRestart()},
			{"Inv23", !(livesOn && a.Vars.Grace != 0) || (b.Vars.Grace >= 1 && b.Vars.Grace <= a.Vars.Grace)},
			{"Inv40Order", !(a.Vars.Static && a.State == fsm.Waiting && b.State == fsm.Running) || (len(from.waiting) > 0 && from.waiting[0] == i)},
			{"Inv44", !(a.State.HasRecord() && a.State != fsm.Finished && b.State == fsm.Removed) ||
				(!a.Vars.Started && !a.Vars.ObservedRuntime) || a.Vars.InFlight == fsm.InFlightSyncTerminatingRuntimePod},
		} {
			if !c.ok {
				return fmt.Errorf("%s violated by p%d: %s %+v -> %s %+v", c.name, i+1, a.State, a.Vars, b.State, b.Vars)
			}
		}
	}
	return nil
}
