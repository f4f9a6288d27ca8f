package explore

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/podlife/podlife/explore/tlcstate"
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
	// Lanes is the number of goroutines that expand states (default
	// GOMAXPROCS). The result does not depend on it.
	Lanes int
	// MaxSims bounds the engine cores kept between levels (default
	// 256Ki, about 512 MiB): the states beyond it are rebuilt by replaying
	// their shortest path. The result does not depend on it.
	MaxSims int
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

	w     *world
	nodes []node
	// levels holds where each depth starts in nodes.
	levels   []int32
	liveness bool // the leads-to properties were checked
	// dropFairness: see Options.
	dropFairness string
}

// StatesPerSecond is the exploration rate.
func (r *Result) StatesPerSecond() float64 { return float64(r.States) / max(r.Elapsed.Seconds(), 1e-9) }

// Dump writes every reachable state in TLC's dump form (see WriteDump).
func (r *Result) Dump(out io.Writer) error {
	states := make([]tlcstate.State, len(r.nodes))
	for i, n := range r.nodes {
		s := n.key.decode(len(r.Config.Pods))
		states[i] = r.w.spec(&s)
	}
	return tlcstate.WriteDump(out, states)
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

// node is one distinct state of the graph, in 24 bytes. Nodes are numbered
// breadth-first, so a node's depth is the level it falls in
// (Result.levels).
type node struct {
	key    key
	parent int32 // -1 for the initial state
	input  int16 // the input from the parent
}

// Explore checks the engine's core on the configuration's bounds. See
// bfs.go for how the lanes share the work.
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
	res := &Result{Config: cfg, w: w}
	edges, err := newSearch(w, res, opts).run()
	if err != nil {
		return nil, err
	}
	if res.Violation != nil {
		return res, nil
	}
	res.liveness, res.dropFairness = !opts.SkipLiveness, opts.dropFairness
	if res.liveness {
		res.Violation = res.checkLiveness(cfg.Inputs(), edges)
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
	for _, p := range r.w.effectProps {
		out = append(out, p.name)
	}
	if r.w.refine {
		out = append(out, errRefinement)
	}
	return out
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
	if err := w.sameKey(sm, &s); err != nil {
		return err
	}
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
			if name := propertyName(err); each != nil && offered && name != errPanic && name != errBookkeeping {
				next := w.project(sm) // the state the violating step reached, for the report (a sound machine)
				each(&next)
			}
			return fmt.Errorf("step %d (%s): %w", i+1, in, err)
		}
		if !offered {
			return fmt.Errorf("step %d (%s): the model offers no such step here", i+1, in)
		}
		next := w.project(sm)
		if err := w.sameKey(sm, &next); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, in, err)
		}
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

// sameKey checks the search's key of sm (keyOf, computed from the core)
// against the key of its projection, which the properties read: the two
// must name one state, or the search would merge states that differ.
func (w *world) sameKey(sm *sim, s *snapshot) error {
	if got, want := w.keyOf(sm), s.key(); got != want {
		return fmt.Errorf("the search's key of this state (%x) is not its projection's (%x): keyOf and project disagree", got, want)
	}
	return nil
}

// FromTLC turns a behaviour TLC printed (an error trace, read with
// ReadStates) into the inputs that drive the engine's core through the same
// states; it fails at the first TLC step that no input reproduces.
func FromTLC(cfg Config, states []tlcstate.State) ([]Input, error) {
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
	deepest := r.levels[len(r.levels)-1] // the first node of the last level
	inputs := r.Config.Inputs()
	var out []Input
	for _, ii := range r.path(deepest) {
		out = append(out, inputs[ii])
	}
	return out
}

// depth is node n's distance from the initial state.
func (r *Result) depth(n int32) int {
	i, found := slices.BinarySearch(r.levels, n)
	if !found {
		i--
	}
	return i
}
