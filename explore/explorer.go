package explore

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/podlife/podlife/trace"
)

// Options tune an exploration.
type Options struct {
	// Progress, if set, is called about every ProgressEvery (default 2 s).
	Progress      func(Progress)
	ProgressEvery time.Duration
	// Strict re-clones the core after every input that fired a row, even
	// when the spec state did not change (the default reuses it: what the
	// engine keeps besides the record never changes a later spec state;
	// TestStrictAgrees checks that on the shipped bounds).
	Strict bool
	// SkipLiveness skips the liveness check (it keeps the state graph).
	SkipLiveness bool
	// dropFairness removes the fairness of an event's class ("Success":
	// of both strong classes), for the mutation tests.
	dropFairness string
}

// Progress is a snapshot of a running exploration, like TLC's progress line.
type Progress struct {
	States      int
	Queue       int
	Depth       int
	Transitions int64
	Elapsed     time.Duration
}

func (p Progress) String() string {
	return fmt.Sprintf("Progress(%d): %d states found, %d in queue, %d transitions, %.0f states/s",
		p.Depth, p.States, p.Queue, p.Transitions, float64(p.States)/max(p.Elapsed.Seconds(), 1e-9))
}

// Result is the outcome of an exploration.
type Result struct {
	Config      Config
	States      int   // distinct spec states
	Transitions int64 // steps taken: (state, input) pairs the model enables, self-loops included
	Depth       int   // the longest shortest path from the initial state
	Elapsed     time.Duration
	// Violation is the first property found violated, or nil.
	Violation *Violation

	w        *world
	nodes    []node
	liveness bool // the leads-to properties were checked
	// dropFairness: see Options.
	dropFairness string
}

// StatesPerSecond is the exploration rate.
func (r *Result) StatesPerSecond() float64 { return float64(r.States) / max(r.Elapsed.Seconds(), 1e-9) }

// Dump writes every reachable state in TLC's dump form (see WriteDump).
func (r *Result) Dump(out io.Writer) error {
	states := make([]State, len(r.nodes))
	for i, n := range r.nodes {
		s := n.key.decode(len(r.Config.Pods))
		states[i] = r.w.spec(&s)
	}
	return WriteDump(out, states)
}

// Violation is a property that does not hold, with the shortest behaviour
// that shows it: Trace leads from the initial state; for a liveness
// property, Cycle is then repeated forever (empty: the state stutters).
type Violation struct {
	Property string
	Message  string
	Trace    []Input
	Cycle    []Input
	// States are the spec states after each input of Trace and Cycle, the
	// initial state first.
	States []string
}

func (v *Violation) Error() string { return v.Property + ": " + v.Message }

// node is one distinct state of the graph.
type node struct {
	key    key
	parent int32 // -1 for the initial state
	input  int16 // the input from the parent
	depth  int32
}

// edge is a transition between two different states.
type edge struct {
	src, dst int32
	input    int16
}

// Explore checks the engine's core on the configuration's bounds.
func Explore(cfg Config, opts Options) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 2 * time.Second
	}
	w := newWorld(cfg)
	if !slices.ContainsFunc(w.properties, func(p *property) bool { return p.kind == leadsTo }) {
		opts.SkipLiveness = true // no leads-to property: the graph is not needed
	}
	inputs := cfg.Inputs()
	res := &Result{Config: cfg, w: w}
	start := time.Now()
	lastProgress := start

	root := w.newSim(nil)
	s0 := w.project(root)
	index := map[key]int32{s0.key(): 0}
	res.nodes = append(res.nodes, node{key: s0.key(), parent: -1})
	if err := w.stateInvariants(&s0); err != nil {
		res.Violation = res.violation(err, 0)
		return res, nil
	}
	// frontier holds the simulations of the states still to expand, by node.
	frontier := map[int32]*sim{0: root}
	var edges []edge
	for n := int32(0); int(n) < len(res.nodes); n++ {
		parent := frontier[n]
		delete(frontier, n)
		ps := res.nodes[n].key.decode(len(cfg.Pods))
		pk := res.nodes[n].key
		work := parent.clone()
		for ii, in := range inputs {
			offered, err := w.apply(work, in)
			if err != nil {
				res.Violation = res.violationAfter(err, n, int16(ii))
				return res.finish(start), nil
			}
			if !offered {
				continue // the core did not change
			}
			res.Transitions++
			next := w.project(work)
			k := next.key()
			if k == pk {
				if opts.Strict {
					work = parent.clone()
				}
				continue
			}
			if err := w.stepProperties(&ps, &next); err != nil {
				res.Violation = res.violationAfter(err, n, int16(ii))
				return res.finish(start), nil
			}
			dst, seen := index[k]
			if !seen {
				dst = int32(len(res.nodes))
				index[k] = dst
				res.nodes = append(res.nodes, node{key: k, parent: n, input: int16(ii), depth: res.nodes[n].depth + 1})
				res.Depth = max(res.Depth, int(res.nodes[dst].depth))
				if err := w.stateInvariants(&next); err != nil {
					res.Violation = res.violation(err, dst)
					return res.finish(start), nil
				}
				frontier[dst] = work
			}
			if !opts.SkipLiveness {
				edges = append(edges, edge{src: n, dst: dst, input: int16(ii)})
			}
			work = parent.clone()
		}
		if opts.Progress != nil && time.Since(lastProgress) >= opts.ProgressEvery {
			lastProgress = time.Now()
			opts.Progress(Progress{States: len(res.nodes), Queue: len(res.nodes) - int(n) - 1, Depth: int(res.nodes[n].depth),
				Transitions: res.Transitions, Elapsed: time.Since(start)})
		}
	}
	res.finish(start)
	res.liveness, res.dropFairness = !opts.SkipLiveness, opts.dropFairness
	if res.liveness {
		res.Violation = res.checkLiveness(inputs, edges)
	}
	return res, nil
}

// Checked names the properties the exploration checked, in table order.
func (r *Result) Checked() []string {
	var out []string
	for _, p := range r.w.properties {
		if p.kind != leadsTo || r.liveness {
			out = append(out, p.name)
		}
	}
	return out
}

func (r *Result) finish(start time.Time) *Result {
	r.States = len(r.nodes)
	r.Elapsed = time.Since(start)
	return r
}

// path returns the inputs from the initial state to node n.
func (r *Result) path(n int32) []int16 {
	var rev []int16
	for ; r.nodes[n].parent >= 0; n = r.nodes[n].parent {
		rev = append(rev, r.nodes[n].input)
	}
	out := make([]int16, len(rev))
	for i, x := range rev {
		out[len(rev)-1-i] = x
	}
	return out
}

// violation describes a state invariant that fails in node n.
func (r *Result) violation(err error, n int32) *Violation {
	inputs := r.Config.Inputs()
	v := &Violation{Property: propertyName(err), Message: err.Error()}
	for _, ii := range r.path(n) {
		v.Trace = append(v.Trace, inputs[ii])
	}
	v.States = r.replayStates(v.Trace)
	return v
}

// violationAfter describes a step property that fails on input ii from node n.
func (r *Result) violationAfter(err error, n int32, ii int16) *Violation {
	v := r.violation(err, n)
	v.Trace = append(v.Trace, r.Config.Inputs()[ii])
	v.States = r.replayStates(v.Trace)
	return v
}

// replayStates renders the states a behaviour passes through.
func (r *Result) replayStates(trace []Input) []string {
	var out []string
	_ = replay(r.Config, trace, func(s *snapshot) { out = append(out, s.String()) })
	return out
}

// Replay feeds inputs to a fresh core of the configuration and checks every
// state invariant and step property on the way; it returns the first
// violation.
func Replay(cfg Config, inputs []Input) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	return replay(cfg, inputs, nil)
}

func replay(cfg Config, inputs []Input, each func(*snapshot)) error {
	w := newWorld(cfg)
	sm := w.newSim(nil)
	s := w.project(sm)
	if each != nil {
		each(&s)
	}
	if err := w.stateInvariants(&s); err != nil {
		return err
	}
	for i, in := range inputs {
		if in.Pod >= len(cfg.Pods) {
			return fmt.Errorf("step %d: %s names pod %d of %d", i+1, in, in.Pod+1, len(cfg.Pods))
		}
		offered, err := w.apply(sm, in)
		if err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, in, err)
		}
		if !offered {
			return fmt.Errorf("step %d (%s): the model offers no such step here", i+1, in)
		}
		next := w.project(sm)
		if each != nil {
			each(&next)
		}
		if err := w.stepProperties(&s, &next); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, in, err)
		}
		if err := w.stateInvariants(&next); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, in, err)
		}
		s = next
	}
	return nil
}

// FromTLC turns a behaviour TLC printed (an error trace, read with
// ReadStates) into the inputs that drive the engine's core through the same
// states; it fails at the first TLC step that no input reproduces.
func FromTLC(cfg Config, states []State) ([]Input, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(states) == 0 {
		return nil, nil
	}
	w := newWorld(cfg)
	sm := w.newSim(nil)
	s := w.project(sm)
	if got, want := w.spec(&s).Canonical(), states[0].Canonical(); got != want {
		return nil, fmt.Errorf("TLC's initial state differs from the engine's:\n  TLC:    %s\n  engine: %s", want, got)
	}
	var out []Input
	inputs := cfg.Inputs()
	for i, target := range states[1:] {
		want := target.Canonical()
		found := false
		for _, in := range inputs {
			try := sm.clone()
			if offered, err := w.apply(try, in); !offered || err != nil {
				continue
			}
			next := w.project(try)
			if w.spec(&next).Canonical() == want {
				out, sm, s, found = append(out, in), try, next, true
				break
			}
		}
		if !found {
			return out, fmt.Errorf("TLC state %d has no engine step from state %d:\n  %s", i+2, i+1, want)
		}
	}
	return out, nil
}

// TraceOf replays inputs on a fresh core of the configuration with the
// trace writer of package trace as its observer, writing one NDJSON line per
// transition to out (see tla/TracePodLifecycle.tla).
func TraceOf(cfg Config, inputs []Input, out io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	w := newWorld(cfg)
	tw := trace.NewWriter(out)
	sm := w.newSim(tw)
	for i, in := range inputs {
		if _, err := w.apply(sm, in); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, in, err)
		}
	}
	return tw.Err()
}

// Deepest returns a shortest behaviour to a state at the greatest depth.
func (r *Result) Deepest() []Input {
	deepest := int32(0)
	for i, n := range r.nodes {
		if n.depth > r.nodes[deepest].depth {
			deepest = int32(i)
		}
	}
	inputs := r.Config.Inputs()
	var out []Input
	for _, ii := range r.path(deepest) {
		out = append(out, inputs[ii])
	}
	return out
}
