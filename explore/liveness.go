package explore

import (
	"fmt"
	"slices"

	"github.com/podlife/podlife/explore/fair"

	"github.com/podlife/podlife/fsm"
)

// The spec's fairness (tla/PodLifecycle.tla's Fairness), per pod: weak
// fairness of the worker loop asking for work (Dequeue), of a sync call
// returning, and of the timer firing; strong fairness of the two successes
// that end a phase.
type fairness struct {
	pod    int
	strong bool
	events []fsm.Event
}

func fairnessClasses(pods int) []fairness {
	var out []fairness
	for p := range pods {
		out = append(out,
			fairness{p, false, []fsm.Event{fsm.Dequeue}},
			fairness{p, false, outcomes},
			fairness{p, false, []fsm.Event{fsm.Requeue}},
			fairness{p, true, []fsm.Event{fsm.TerminatingDone}},
			fairness{p, true, []fsm.Event{fsm.TerminatedDone}},
		)
	}
	return out
}

// liveness is one leads-to property of one pod: from every state where
// from holds, every fair behaviour reaches a state where holds does.
type liveness struct {
	*property
	pod int
}

func (r *Result) livenessProperties() []liveness {
	var out []liveness
	for _, p := range r.w.properties {
		if p.kind != leadsTo {
			continue
		}
		for i := range r.Config.Pods {
			out = append(out, liveness{p, i})
		}
	}
	return out
}

// checkLiveness looks, for every property and pod, for a reachable fair
// cycle inside the region; it returns the first one found.
func (r *Result) checkLiveness(inputs []Input, edges []fair.Edge) *Violation {
	g := fair.NewGraph(len(r.nodes), edges)
	classes := slices.DeleteFunc(fairnessClasses(len(r.Config.Pods)), func(f fairness) bool {
		return r.dropFairness != "" && (slices.Contains(f.events, r.w.events[r.dropFairness]) || r.dropFairness == "Success" && f.strong)
	})
	classOf := make([][]int, len(inputs)) // input -> the fairness classes it belongs to
	for ii, in := range inputs {
		for ci, c := range classes {
			if in.Pod == c.pod && slices.Contains(c.events, r.w.events[in.Event]) {
				classOf[ii] = append(classOf[ii], ci)
			}
		}
	}
	views := make([][]podView, len(r.nodes))
	for i, n := range r.nodes {
		s := n.key.decode(len(r.Config.Pods))
		views[i] = r.w.views(&s)
	}
	strong := make([]bool, len(classes))
	for c, cl := range classes {
		strong[c] = cl.strong
	}
	for _, prop := range r.livenessProperties() {
		w := fair.Pending(g, func(s int32) bool { return prop.from(&views[s][prop.pod], nil) },
			func(s int32) bool { return prop.holds(&views[s][prop.pod], nil) })
		if scc := fair.FairSCC(g, w.In, strong, classOf); scc != nil {
			return r.livenessViolation(prop, g, w, scc, inputs)
		}
	}
	return nil
}

// livenessViolation builds the lasso: the shortest path to the component,
// then a shortest cycle inside it through that state (none: it stutters).
func (r *Result) livenessViolation(prop liveness, g *fair.Graph, w fair.Waiting, comp []int32, inputs []Input) *Violation {
	entry := comp[0]
	for _, s := range comp {
		if r.depth(s) < r.depth(entry) {
			entry = s
		}
	}
	v := &Violation{Property: prop.name,
		Message: fmt.Sprintf("%s violated for %s: a fair behaviour stays in a set of %d states where it waits forever", prop.name, r.Config.Pods[prop.pod], len(comp))}
	// The shortest path to a state where the property starts to wait, then
	// the waiting states that lead to the component.
	var back []int16
	start := entry
	for ; w.Via[start] >= 0; start = w.Via[start] {
		back = append(back, w.ViaInput[start])
	}
	for _, ii := range r.path(start) {
		v.Trace = append(v.Trace, inputs[ii])
	}
	for i := len(back) - 1; i >= 0; i-- {
		v.Trace = append(v.Trace, inputs[back[i]])
	}
	// A shortest cycle inside the component back to the entry.
	for _, ii := range fair.Cycle(g, comp, entry) {
		v.Cycle = append(v.Cycle, inputs[ii])
	}
	v.States = r.replayStates(append(slices.Clone(v.Trace), v.Cycle...))
	return v
}
