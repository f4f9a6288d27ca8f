// Package fair finds the fair cycles that violate a leads-to property in
// an explored state graph, as TLC's liveness checking does on its behaviour
// graph (-lncheck final): the explorers (package explore for the pod
// table, explore/container for the container table) record their graph's
// edges, mark where a property waits (Pending), and ask for a strongly
// connected set of waiting states that admits a behaviour fair to every
// weakly and strongly fair action (FairSCC); Cycle turns it into the loop
// of a counterexample.
package fair

import "slices"

// Edge is a transition between two different states, by the explorer's
// input number Input.
type Edge struct {
	Src, Dst int32
	Input    int16
}

// Graph is an explored state graph in compressed rows.
type Graph struct {
	start []int32 // edges of node i: [start[i], start[i+1])
	dst   []int32
	input []int16
}

// NewGraph builds the graph of n states; each source's edges keep the
// order they have in edges.
func NewGraph(n int, edges []Edge) *Graph {
	g := &Graph{start: make([]int32, n+1), dst: make([]int32, len(edges)), input: make([]int16, len(edges))}
	for _, e := range edges {
		g.start[e.Src+1]++
	}
	for i := 1; i <= n; i++ {
		g.start[i] += g.start[i-1]
	}
	next := slices.Clone(g.start)
	for _, e := range edges {
		g.dst[next[e.Src]], g.input[next[e.Src]] = e.Dst, e.Input
		next[e.Src]++
	}
	return g
}

// Len is the number of states.
func (g *Graph) Len() int { return len(g.start) - 1 }

// Waiting is where a behaviour can be while a leads-to property still
// waits: In marks the states reachable from a state where it starts to
// wait (its From holds and its Holds does not), along states where Holds
// does not hold (a fair cycle among them violates the property); Via and
// ViaInput lead each such state back to such a start (-1 at the start
// itself), for the counterexample.
type Waiting struct {
	In       []bool
	Via      []int32
	ViaInput []int16
}

// Pending computes the waiting region of a property whose From and Holds
// are starts and holds on the graph's states.
func Pending(g *Graph, starts, holds func(s int32) bool) Waiting {
	n := g.Len()
	w := Waiting{In: make([]bool, n), Via: make([]int32, n), ViaInput: make([]int16, n)}
	var queue []int32
	for i := range int32(n) {
		if starts(i) && !holds(i) {
			w.In[i], w.Via[i] = true, -1
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for e := g.start[s]; e < g.start[s+1]; e++ {
			d := g.dst[e]
			if !w.In[d] && !holds(d) {
				w.In[d], w.Via[d], w.ViaInput[d] = true, s, g.input[e]
				queue = append(queue, d)
			}
		}
	}
	return w
}

// FairSCC returns the states of a strongly connected set inside in that
// admits a fair infinite behaviour (every state may also stutter), or nil.
// strong[c] says whether fairness class c is strong; classOf[input] lists
// the classes an input's steps belong to. It refines components
// Emerson-Lei style: a weakly fair class enabled everywhere but never
// taken inside rules a component out; a strongly fair class enabled
// somewhere but never taken removes the states where it is enabled.
func FairSCC(g *Graph, in []bool, strong []bool, classOf [][]int) []int32 {
	for _, comp := range SCCs(g, in) {
		if fair := refine(g, comp, strong, classOf); fair != nil {
			return fair
		}
	}
	return nil
}

func refine(g *Graph, comp []int32, strong []bool, classOf [][]int) []int32 {
	member := map[int32]bool{}
	for _, s := range comp {
		member[s] = true
	}
	enabledCount := make([]int, len(strong))
	takenInside := make([]bool, len(strong))
	for _, s := range comp {
		enabledHere := make([]bool, len(strong))
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
	for c, isStrong := range strong {
		switch {
		case takenInside[c] || enabledCount[c] == 0:
		case !isStrong && enabledCount[c] == len(comp):
			return nil // continuously enabled, never taken: no fair cycle here
		case isStrong:
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
	inner := make([]bool, g.Len())
	for _, s := range comp {
		inner[s] = !drop[s]
	}
	return FairSCC(g, inner, strong, classOf)
}

// SCCs returns the strongly connected components of the subgraph induced
// by in (iterative Tarjan). Single states count: they may stutter.
func SCCs(g *Graph, in []bool) [][]int32 {
	n := g.Len()
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

// Cycle returns the inputs of a shortest cycle from entry back to entry
// inside comp (breadth-first), or nil when there is none (a single state
// that stutters).
func Cycle(g *Graph, comp []int32, entry int32) []int16 {
	member := map[int32]bool{}
	for _, s := range comp {
		member[s] = true
	}
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
	if _, ok := prev[entry]; !ok {
		return nil
	}
	var rev []int16
	for s := entry; ; {
		h := prev[s]
		rev = append(rev, h.input)
		if s = h.from; s == entry {
			break
		}
	}
	slices.Reverse(rev)
	return rev
}
