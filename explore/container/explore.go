package container

import (
	"fmt"
	"time"

	"github.com/podlife/podlife/explore/fair"
	"github.com/podlife/podlife/spec"
)

// Result is the outcome of an exploration.
type Result struct {
	Config      Config
	States      int   // distinct states
	Transitions int64 // steps taken: (state, input) pairs Next enables, stuttering ones included
	Depth       int   // the longest shortest path from the initial state
	Elapsed     time.Duration
	// Checked names the properties checked, in table order.
	Checked []string
	// Violation is the first property found violated, or nil.
	Violation *Violation

	m      *model
	inputs []Input
	nodes  []state
	parent []int32
	via    []int16
	depth  []int32
}

// Violation is a property that does not hold, with a shortest behaviour
// that shows it: Trace leads from the initial state; for a leads-to
// property Cycle is then repeated forever (empty: the last state
// stutters). States are the states along Trace and Cycle, the initial
// state first.
type Violation struct {
	Property string
	Message  string
	Trace    []Input
	Cycle    []Input
	States   []string
}

func (v *Violation) Error() string { return v.Property + ": " + v.Message }

// Explore checks the configuration: every reachable state and step, and
// the leads-to properties on the state graph.
func Explore(cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return explore(cfg, newModel(cfg))
}

func explore(cfg Config, m *model) (*Result, error) {
	start := time.Now()
	props := cfg.properties()
	res := &Result{Config: cfg, m: m, inputs: m.inputs()}
	for _, p := range props {
		res.Checked = append(res.Checked, p.Name)
	}
	defer func() { res.States, res.Elapsed = len(res.nodes), time.Since(start) }()
	liveness := hasLeadsTo(props)
	index := map[state]int32{}
	var edges []fair.Edge
	var from, to envs
	add := func(s state, parent int32, in int16) (int32, bool) {
		if n, ok := index[s]; ok {
			return n, false
		}
		n := int32(len(res.nodes))
		index[s] = n
		d := int32(0)
		if parent >= 0 {
			d = res.depth[parent] + 1
		}
		res.nodes, res.parent, res.via, res.depth = append(res.nodes, s), append(res.parent, parent), append(res.via, in), append(res.depth, d)
		return n, true
	}
	add(m.initial(), -1, -1)
	m.fill(&from, &res.nodes[0])
	if name, i := m.invariant(props, &from); name != "" {
		res.Violation = res.violation(name, m.describe(name, i), 0, nil)
		return res, nil
	}
	for n := int32(0); int(n) < len(res.nodes); n++ {
		s := res.nodes[n]
		m.fill(&from, &s)
		for ii, in := range res.inputs {
			t, ok, err := m.next(&s, in)
			if err != nil {
				return nil, fmt.Errorf("explorer: from %s: %w", m.format(&s), err)
			}
			if !ok {
				continue
			}
			res.Transitions++
			if t == s {
				continue // a stuttering step: no property reads it
			}
			m.fill(&to, &t)
			if name, i := m.step(props, &from, &to); name != "" {
				res.Violation = res.violation(name, m.describe(name, i), n, &in)
				return res, nil
			}
			dst, isNew := add(t, n, int16(ii))
			if isNew {
				res.Depth = max(res.Depth, int(res.depth[dst]))
				if name, i := m.invariant(props, &to); name != "" {
					res.Violation = res.violation(name, m.describe(name, i), dst, nil)
					return res, nil
				}
			}
			if liveness {
				edges = append(edges, fair.Edge{Src: n, Dst: dst, Input: int16(ii)})
			}
		}
	}
	if liveness {
		res.Violation = res.checkLiveness(props, edges)
	}
	return res, nil
}

// path is the inputs from the initial state to node n.
func (r *Result) path(n int32) []Input {
	var rev []Input
	for ; r.parent[n] >= 0; n = r.parent[n] {
		rev = append(rev, r.inputs[r.via[n]])
	}
	out := make([]Input, len(rev))
	for i, in := range rev {
		out[len(rev)-1-i] = in
	}
	return out
}

// violation describes a property violated in node n or, with last set,
// on the step by last from it.
func (r *Result) violation(name, msg string, n int32, last *Input) *Violation {
	v := &Violation{Property: name, Message: msg, Trace: r.path(n)}
	if last != nil {
		v.Trace = append(v.Trace, *last)
	}
	v.States = r.replay(v.Trace)
	return v
}

// replay renders the states a behaviour passes through.
func (r *Result) replay(inputs []Input) []string {
	s := r.m.initial()
	out := []string{r.m.format(&s)}
	for _, in := range inputs {
		t, ok, err := r.m.next(&s, in)
		if !ok || err != nil {
			return append(out, fmt.Sprintf("(%s not enabled: %v)", in, err))
		}
		s = t
		out = append(out, r.m.format(&s))
	}
	return out
}

// checkLiveness looks, for every leads-to property and container, for a
// reachable fair cycle of states where the property waits.
func (r *Result) checkLiveness(props []spec.Property, edges []fair.Edge) *Violation {
	g := fair.NewGraph(len(r.nodes), edges)
	strong, classOf := r.m.fairness(r.inputs)
	all := make([]envs, len(r.nodes))
	for n := range r.nodes {
		r.m.fill(&all[n], &r.nodes[n])
	}
	for _, p := range props {
		if p.Kind != spec.LeadsTo {
			continue
		}
		for i := range r.m.n {
			w := fair.Pending(g, func(s int32) bool { return p.From.Eval(&all[s][i]) == 1 },
				func(s int32) bool { return p.Holds.Eval(&all[s][i]) == 1 })
			comp := fair.FairSCC(g, w.In, strong, classOf)
			if comp == nil {
				continue
			}
			entry := comp[0]
			for _, s := range comp {
				if r.depth[s] < r.depth[entry] {
					entry = s
				}
			}
			v := &Violation{Property: p.Name,
				Message: fmt.Sprintf("%s: a fair behaviour stays in a set of %d states where it waits forever", r.m.describe(p.Name, i), len(comp))}
			var back []Input
			st := entry
			for ; w.Via[st] >= 0; st = w.Via[st] {
				back = append(back, r.inputs[w.ViaInput[st]])
			}
			v.Trace = r.path(st)
			for k := len(back) - 1; k >= 0; k-- {
				v.Trace = append(v.Trace, back[k])
			}
			for _, ii := range fair.Cycle(g, comp, entry) {
				v.Cycle = append(v.Cycle, r.inputs[ii])
			}
			v.States = r.replay(append(append([]Input(nil), v.Trace...), v.Cycle...))
			return v
		}
	}
	return nil
}
