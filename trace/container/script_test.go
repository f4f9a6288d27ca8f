package container_test

import (
	cfsm "github.com/podlife/podlife/fsm/container"
	ctrace "github.com/podlife/podlife/trace/container"
)

// script records a fixed history, the base of the corrupted traces
// (corrupt_test.go): unlike the random walks, it stays the same when the
// table gains an event. Pod uid-script is recorded in sync 0 (every
// transition), pod uid-plan as a plan records it: decisions in syncs, the
// exits between them observed without a line.
func script(rec *ctrace.Recorder) {
	a := newPod(&podSpec{uid: "uid-script", ctrs: []ctrSpec{proxy, web}})
	const pr, wb = 0, 1
	do := func(p *pod, sync *ctrace.Sync, i int, ev cfsm.Event, code cfsm.ExitCode) {
		e := p.facts(i)
		e.Code = code
		if !cfsm.Enabled(p.state[i], p.vars[i], ev, e) {
			panic("script: " + ev.String() + " does not fire for " + p.spec.ctrs[i].name)
		}
		p.take(rec, sync, i, ev, e)
		p.settle()
	}
	none := cfsm.ExitCodeNone
	for _, s := range []struct {
		i  int
		ev cfsm.Event
	}{
		{pr, cfsm.Start}, {pr, cfsm.Begin}, {pr, cfsm.SpecChange}, {wb, cfsm.LivenessFail}, {pr, cfsm.Replace},
		{pr, cfsm.Begin}, {pr, cfsm.StartupOK}, {wb, cfsm.Start}, {wb, cfsm.Begin},
	} {
		do(a, nil, s.i, s.ev, none)
	}
	do(a, nil, wb, cfsm.Exit, cfsm.ExitCodeOther)
	for _, ev := range []cfsm.Event{cfsm.Restart, cfsm.BackoffDone, cfsm.Begin, cfsm.StartupOK} {
		do(a, nil, wb, ev, none)
	}

	b := newPod(&podSpec{uid: "uid-plan", ctrs: []ctrSpec{initC, web}, plan: true})
	const in, bw = 0, 1
	s := rec.Begin(b.spec.uid)
	do(b, s, in, cfsm.Start, none)
	do(b, s, in, cfsm.Begin, none)
	b.take(nil, nil, in, cfsm.Exit, withCode(b.facts(in), cfsm.ExitCodeZero)) // observed
	s = rec.Begin(b.spec.uid)
	do(b, s, bw, cfsm.Start, none)
	do(b, s, bw, cfsm.Begin, none)
	b.take(nil, nil, bw, cfsm.Exit, withCode(b.facts(bw), cfsm.ExitCodeOther)) // observed
	s = rec.Begin(b.spec.uid)
	do(b, s, bw, cfsm.Restart, none)
	do(b, s, bw, cfsm.BackoffDone, none)
	do(b, s, bw, cfsm.Begin, none)
	do(b, rec.Begin(b.spec.uid), bw, cfsm.SpecChange, none)
	do(b, rec.Begin(b.spec.uid), bw, cfsm.Replace, none)
}

func withCode(p cfsm.Params, c cfsm.ExitCode) cfsm.Params {
	p.Code = c
	return p
}
