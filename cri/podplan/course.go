package podplan

import (
	"fmt"
	"time"

	"github.com/podlife/podlife/cri/apistatus"
	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/fsm/container"
)

// A container's course in one sync: the rows of the container table
// (fsm/container) that its observation and the kubelet's decisions fire.
// Every action of the plan is made from a course (fromCourse), so no
// decision about a container is made but by the table's generated guards
// (internal/archtest checks it).

// decisions are the table's decision events in the order one sync tries
// them: purge what a previous sandbox left, create, start, replace,
// restart (into back-off), and end the back-off when its wait is over.
var decisions = [...]container.Event{container.Purge, container.Start, container.Begin, container.Replace, container.Restart, container.BackoffDone}

// Step is one row a container's course fired: the event, the parameters it
// fired with and the transition, all a trace of the plan's decisions
// records (trace/container).
type Step struct {
	Container string
	Event     container.Event
	Params    container.Params
	container.Transition
}

// maxCourse bounds a course: the longest is SandboxDied, Purge, Start,
// Begin; or a kill, Restart, BackoffDone, Begin.
const maxCourse = 6

// course is the rows o fires in one sync: first the observations the view
// reports (the death of a previous sandbox's running instance, a failed
// probe, a changed spec), then every decision a row enables, until none
// does, the instance runs, or its back-off is not over. exitedAt is when
// the instance the course restarts ended (now, for one it kills); wait is
// its back-off.
func (in *Input) course(o *observed) (trs []Step, exitedAt time.Time, wait time.Duration) {
	s, v := o.state, o.vars
	fire := func(e container.Event, p container.Params) bool {
		tr, err := container.Fire(s, v, e, p)
		if err != nil {
			return false
		}
		if tr.To != tr.From || tr.After != tr.Before || tr.Effects != 0 {
			trs = append(trs, Step{Container: o.spec.Name, Event: e, Params: p, Transition: tr})
		}
		s, v = tr.To, tr.After
		return true
	}
	p := o.params
	if o.cur != nil {
		exitedAt = time.Unix(0, o.cur.FinishedAt)
	}
	switch {
	case s != container.Running:
	case v.Gen != p.Sandbox:
		fire(container.SandboxDied, p)
	case o.failed:
		// A startup probe's failure kills an instance the table counts as
		// not started (StartupFail); one it counts as started (a sidecar
		// the pod ran behind in this sandbox) is killed as a liveness
		// failure kills it.
		ev := container.LivenessFail
		if o.probe == prober.Startup && !v.Started {
			ev = container.StartupFail
		}
		if fire(ev, p) && s != container.Running {
			exitedAt = in.Now
		}
	case o.specChanged:
		fire(container.SpecChange, p)
	}
	for len(trs) < maxCourse && s != container.Running {
		fired := false
		for _, e := range decisions {
			if e == container.BackoffDone && s == container.BackOff {
				if wait = in.Backoff(o.spec.Name, exitedAt); wait > 0 {
					continue
				}
			}
			if fired = fire(e, p); fired {
				break
			}
		}
		if !fired {
			break
		}
	}
	return trs, exitedAt, wait
}

// fromCourse is the action a container's course calls for, ok false when
// it calls for none (nothing fired, or only a purge, which the garbage
// collector carries out): each row's effect is one runtime call of the
// action, and its ID is part of the action's reason (Rows). It is the only
// place an action is made.
func (in *Input) fromCourse(o *observed, trs []Step, exitedAt time.Time, wait time.Duration) (act ContainerAction, ok bool) {
	act = ContainerAction{Spec: o.spec}
	for _, tr := range trs {
		act.Rows = append(act.Rows, tr.Row)
		switch {
		case tr.Effects.Has(container.KillInstance):
			act.Kill, act.Why = o.cur, KillProbeFailed
			if tr.After.Replacing {
				act.Why = KillSpecChanged
			} else {
				act.Probe = o.probe
			}
		case tr.Effects.Has(container.WaitBackoff):
			act.Then, act.ExitedAt = ThenBackOff, exitedAt
			act.Wait = apistatus.Waiting{Container: o.spec.Name, Reason: "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", wait.Round(time.Second), o.spec.Name, in.Pod.Name)}
		case tr.Effects.Has(container.CreateInstance) && tr.From == container.BackOff:
			act.Then, act.Wait = ThenRestart, apistatus.Waiting{}
		case tr.Effects.Has(container.CreateInstance):
			act.Then = ThenCreate
		case tr.Effects.Has(container.StartInstance) && act.Then == ThenNothing:
			act.Then, act.Created = ThenStart, o.cur
		}
	}
	return act, act.Kill != nil || act.Then != ThenNothing
}
