package container

import (
	"fmt"

	cfsm "github.com/podlife/podlife/fsm/container"
)

// Check replays a container trace with cfsm.Fire and returns an error
// naming the first line it does not reproduce: a seq that is not the line's
// number, a container whose kind, policy or rule changes, a pod whose
// podNever changes or whose sandbox generation goes back, a before-record that is not the after-record of the container's
// previous line, an event that no row accepts, or a row, to state,
// after-record or effects other than the ones Fire gives. It checks what
// tla/TraceContainerLifecycle.tla checks, with the generated Go guards in
// place of the generated TLA+ operators.
func Check(lines []Line) error {
	if len(lines) == 0 {
		return fmt.Errorf("container trace: no line")
	}
	type key struct{ pod, container string }
	type record struct {
		sync  uint64
		state cfsm.State
		vars  cfsm.Vars
	}
	last := map[key]record{}
	spec := map[key]cfsm.Params{} // the container's first line's params
	pods := map[string]cfsm.Params{}
	syncs := map[string]uint64{}
	for i, l := range lines {
		n := i + 1
		fail := func(format string, args ...any) error {
			return fmt.Errorf("container trace line %d (%s/%s %s): %s", n, l.Pod, l.Container, l.Event, fmt.Sprintf(format, args...))
		}
		if l.Seq != uint64(n) {
			return fail("seq is %d, not %d", l.Seq, n)
		}
		k := key{l.Pod, l.Container}
		if s, ok := spec[k]; ok && (s.Kind != l.Params.Kind || s.Policy != l.Params.Policy || s.Rule != l.Params.Rule) {
			return fail("the container's spec changed: kind %s, policy %s, rule %t on its first line; %s, %s, %t here",
				s.Kind, s.Policy, s.Rule, l.Params.Kind, l.Params.Policy, l.Params.Rule)
		}
		if s, ok := syncs[l.Pod]; ok && s > l.Sync {
			return fail("the pod's sync went back from %d to %d", s, l.Sync)
		}
		syncs[l.Pod] = l.Sync
		if s, ok := pods[l.Pod]; ok && (s.PodNever != l.Params.PodNever || s.Sandbox > l.Params.Sandbox) {
			return fail("the pod's spec changed or its sandbox went back: podNever %t, sandbox %d on its previous line; %t, %d here",
				s.PodNever, s.Sandbox, l.Params.PodNever, l.Params.Sandbox)
		}
		if _, ok := spec[k]; !ok {
			spec[k] = l.Params
		}
		pods[l.Pod] = l.Params
		if prev, ok := last[k]; ok && prev.sync == l.Sync && (prev.state != l.From || prev.vars != l.Before) {
			return fail("the record before, %s %+v, is not the one the container's previous line left, %s %+v", l.From, l.Before, prev.state, prev.vars)
		}
		t, err := cfsm.Fire(l.From, l.Before, l.Event, l.Params)
		switch {
		case err != nil:
			return fail("no row of %s fires in %s with these params", l.Event, l.From)
		case t.Row != l.Row:
			return fail("the row that fires is %s, not %s", t.Row, l.Row)
		case t.To != l.To || t.After != l.After:
			return fail("row %s leaves %s %+v, not %s %+v", t.Row, t.To, t.After, l.To, l.After)
		case t.Effects != l.Effects:
			return fail("row %s has the effects [%s], not [%s]", t.Row, t.Effects, l.Effects)
		}
		last[k] = record{l.Sync, l.To, l.After}
	}
	return nil
}
