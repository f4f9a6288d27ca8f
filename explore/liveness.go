package explore

import (
	"fmt"
	"slices"

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

// graph is the explored state graph in compressed rows.
type graph struct {
	start []int32 // edges of node i: [start[i], start[i+1])
	dst   []int32
	input []int16
}

func newGraph(n int, edges []edge) *graph {
	g := &graph{start: make([]int32, n+1), dst: make([]int32, len(edges)), input: make([]int16, len(edges))}
	for _, e := range edges {
		g.start[e.src+1]++
	}
	for i := 1; i <= n; i++ {
		g.start[i] += g.start[i-1]
	}
	next := slices.Clone(g.start)
	for _, e := range edges {
		g.dst[next[e.src]], g.input[next[e.src]] = e.dst, e.input
		next[e.src]++
	}
	return g
}

// checkLiveness looks, for every property and pod, for a reachable fair
// cycle inside the region; it returns the first one found.
func (r *Result) checkLiveness(inputs []Input, edges []edge) *Violation {
	g := newGraph(len(r.nodes), edges)
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
	for _, prop := range r.livenessProperties() {
		w := pending(g, views, prop)
		if scc := fairSCC(g, w.in, classes, classOf); scc != nil {
			return r.livenessViolation(prop, g, w, scc, inputs)
		}
	}
	return nil
}

// waiting is where a behaviour can be while a leads-to property still
// waits: in marks the states reachable from a state where from holds and
// holds does not, along states where holds does not (a fair cycle among
// them violates the property); via and viaInput lead each such state back
// to such a start (-1 at the start itself), for the counterexample.
type waiting struct {
	in       []bool
	via      []int32
	viaInput []int16
}

func pending(g *graph, views [][]podView, prop liveness) waiting {
	n := len(views)
	w := waiting{in: make([]bool, n), via: make([]int32, n), viaInput: make([]int16, n)}
	var queue []int32
	for i := range views {
		v := &views[i][prop.pod]
		if prop.from(v, nil) && !prop.holds(v, nil) {
			w.in[i], w.via[i] = true, -1
			queue = append(queue, int32(i))
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for e := g.start[s]; e < g.start[s+1]; e++ {
			d := g.dst[e]
			if !w.in[d] && !prop.holds(&views[d][prop.pod], nil) {
				w.in[d], w.via[d], w.viaInput[d] = true, s, g.input[e]
				queue = append(queue, d)
			}
		}
	}
	return w
}

// fairSCC returns the states of a strongly connected set inside the region
// that admits a fair infinite behaviour (every state may also stutter), or
// nil. It refines components Emerson-Lei style: a weakly fair class enabled
// everywhere but never taken inside rules a component out; a strongly fair
// class enabled somewhere but never taken removes the states where it is
// enabled.
func fairSCC(g *graph, in []bool, classes []fairness, classOf [][]int) []int32 {
	for _, comp := range sccs(g, in) {
		if fair := refine(g, comp, classes, classOf); fair != nil {
			return fair
		}
	}
	return nil
}

func refine(g *graph, comp []int32, classes []fairness, classOf [][]int) []int32 {
	member := map[int32]bool{}
	for _, s := range comp {
		member[s] = true
	}
	enabledCount := make([]int, len(classes))
	takenInside := make([]bool, len(classes))
	for _, s := range comp {
		enabledHere := make([]bool, len(classes))
		for e := g.start[s]; e < g.start[s+1]; e++ {
			for _, c := range classOf[g.input[e]] {
				enabledHere[c] = true
				if member[g.dst[e]] {
					takenInside[c] = true
				}
			}
		}
		for c, on := range enabledHere {
			if on {
				enabledCount[c]++
			}
		}
	}
	var drop map[int32]bool
	for c, cl := range classes {
		switch {
		case takenInside[c] || enabledCount[c] == 0:
		case !cl.strong && enabledCount[c] == len(comp):
			return nil // continuously enabled, never taken: no fair cycle here
		case cl.strong:
			if drop == nil {
				drop = map[int32]bool{}
			}
			for _, s := range comp {
				for e := g.start[s]; e < g.start[s+1]; e++ {
					if slices.Contains(classOf[g.input[e]], c) {
						drop[s] = true
					}
				}
			}
		}
	}
	if drop == nil {
		return comp
	}
	inner := make([]bool, len(g.start)-1)
	for _, s := range comp {
		inner[s] = !drop[s]
	}
	return fairSCC(g, inner, classes, classOf)
}

// sccs returns the strongly connected components of the subgraph induced by
// in (iterative Tarjan). Single states count: they may stutter.
func sccs(g *graph, in []bool) [][]int32 {
	n := len(g.start) - 1
	index, low := make([]int32, n), make([]int32, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int32
	var out [][]int32
	next := int32(0)
	type frame struct {
		v int32
		e int32
	}
	for root := int32(0); int(root) < n; root++ {
		if !in[root] || index[root] >= 0 {
			continue
		}
		call := []frame{{root, g.start[root]}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.e < g.start[f.v+1] {
				w := g.dst[f.e]
				f.e++
				if !in[w] {
					continue
				}
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, g.start[w]})
				} else if onStack[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				low[call[len(call)-1].v] = min(low[call[len(call)-1].v], low[v])
			}
			if low[v] == index[v] {
				var comp []int32
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				out = append(out, comp)
			}
		}
	}
	return out
}

// livenessViolation builds the lasso: the shortest path to the component,
// then a shortest cycle inside it through that state (none: it stutters).
func (r *Result) livenessViolation(prop liveness, g *graph, w waiting, comp []int32, inputs []Input) *Violation {
	member := map[int32]bool{}
	entry := comp[0]
	for _, s := range comp {
		member[s] = true
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
	for ; w.via[start] >= 0; start = w.via[start] {
		back = append(back, w.viaInput[start])
	}
	for _, ii := range r.path(start) {
		v.Trace = append(v.Trace, inputs[ii])
	}
	for i := len(back) - 1; i >= 0; i-- {
		v.Trace = append(v.Trace, inputs[back[i]])
	}
	// Breadth-first search inside the component back to the entry.
	type hop struct {
		from  int32
		input int16
	}
	prev := map[int32]hop{}
	queue := []int32{entry}
	for len(queue) > 0 && len(comp) > 1 {
		s := queue[0]
		queue = queue[1:]
		for e := g.start[s]; e < g.start[s+1]; e++ {
			d := g.dst[e]
			if !member[d] {
				continue
			}
			if _, ok := prev[d]; ok {
				continue
			}
			prev[d] = hop{s, g.input[e]}
			if d == entry {
				queue = nil
				break
			}
			queue = append(queue, d)
		}
	}
	if _, ok := prev[entry]; ok {
		var rev []Input
		for s := entry; ; {
			h := prev[s]
			rev = append(rev, inputs[h.input])
			if s = h.from; s == entry {
				break
			}
		}
		for i := len(rev) - 1; i >= 0; i-- {
			v.Cycle = append(v.Cycle, rev[i])
		}
	}
	v.States = r.replayStates(append(slices.Clone(v.Trace), v.Cycle...))
	return v
}
