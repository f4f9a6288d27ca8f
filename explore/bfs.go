package explore

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podlife/podlife/explore/fair"
)

// search is one breadth-first exploration, level by level, by Options.Lanes
// goroutines (lanes). Within a level each lane expands its share of the
// frontier and inserts the states it finds into the shared visited set
// (stateSet); when all are done, settle numbers the level's new states in
// the order a sequential search would have found them (by the smallest
// parent, then the smallest input that reaches them), so that node
// numbers, parents, shortest counterexamples and the state graph do not
// depend on the number of lanes or on their timing.
//
// A lane expands only simulations of its own lineage: a core and its
// clones share the engine's checked looplab FSM (worker.Core.Clone), so
// every lane starts from its own initial core. A new state's simulation
// belongs to the lane that found it first; when the shares of the next
// level differ, a lane with too few takes states from one with too many
// and rebuilds their simulations by replaying their shortest path on its
// own core (replay is deterministic: TestExploreLanesAgree).
type search struct {
	w     *world
	res   *Result
	opts  Options
	set   stateSet
	lanes []*lane
	// inputs are the configuration's inputs; edges whether the state graph
	// is kept (for liveness).
	inputs []Input
	edges  bool
	// cutoff is the smallest parent with a violation found in this level:
	// lanes skip the states after it.
	cutoff atomic.Int32
	// kept counts the simulations of this level's new states kept for the
	// next level (at most maxSims: the others are rebuilt by replay).
	kept    atomic.Int64
	maxSims int64
}

// defaultMaxSims bounds the simulations kept for the next level: about 2
// KB each (a core clone), 512 MiB in all. The shipped configurations stay
// under it; larger ones rebuild the rest by replay (a path of at most the
// depth, cheaper than the expansion that follows).
const defaultMaxSims = 256 << 10

// lane is one goroutine's part of the search.
type lane struct {
	id       int
	root     *sim   // the lane's initial core, whose clones it expands
	frontier []item // this level's states to expand
	// found lists the edges of this level (dst a freshRef when new), the
	// violations found, and the transitions taken.
	edges       []fair.Edge
	violations  []laneViolation
	transitions int64
	err         error // an internal error (a replay that does not reproduce its state)
	// from, to and their views are the lane's buffers for the checks.
	from, to           snapshot
	fromViews, toViews []podView
}

// item is a state to expand: its node and, unless the lane must rebuild it
// by replay, its simulation.
type item struct {
	node int32
	sim  *sim
}

// laneViolation is a property violated on the step (parent, input), or,
// with fresh set, by the new state fresh (a freshRef) found on it.
type laneViolation struct {
	err    error
	parent int32
	input  int16
	fresh  int32
	state  bool // an invariant of the new state, not the step
}

func newSearch(w *world, res *Result, opts Options) *search {
	n := opts.Lanes
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	s := &search{w: w, res: res, opts: opts, inputs: w.cfg.Inputs(), edges: !opts.SkipLiveness, maxSims: int64(opts.MaxSims)}
	if s.maxSims <= 0 {
		s.maxSims = defaultMaxSims
	}
	for i := range n {
		s.lanes = append(s.lanes, &lane{id: i, root: w.newSim(nil)})
	}
	return s
}

// run explores; it returns the state graph's edges when liveness is to be
// checked.
func (s *search) run() ([]fair.Edge, error) {
	start := time.Now()
	lastProgress := start
	res := s.res
	defer func() { res.States, res.Elapsed = len(res.nodes), time.Since(start) }()

	root := s.lanes[0].root.clone()
	k0 := s.w.keyOf(root)
	res.nodes = append(res.nodes, node{key: k0, parent: -1})
	res.levels = []int32{0}
	s.set.insertSettled(k0, 0)
	s0 := k0.decode(len(s.w.cfg.Pods))
	if err := s.w.stateInvariants(&s0); err != nil {
		res.Violation = res.violation(err, 0)
		return nil, nil
	}
	s.lanes[0].frontier = []item{{0, root}}
	var edges []fair.Edge
	for depth := 0; ; depth++ {
		s.kept.Store(0)
		s.cutoff.Store(int32(len(res.nodes)))
		var wg sync.WaitGroup
		for _, l := range s.lanes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.expand(l)
			}()
		}
		wg.Wait()
		for _, l := range s.lanes {
			if l.err != nil {
				return nil, l.err
			}
		}
		remap := s.settle()
		if v := s.firstViolation(remap); v != nil {
			res.Violation = v
			return nil, nil
		}
		for _, l := range s.lanes {
			res.Transitions += l.transitions
			l.transitions = 0
			if s.edges {
				for _, e := range l.edges {
					if e.Dst < 0 {
						e.Dst = remap(e.Dst)
					}
					edges = append(edges, e)
				}
			}
			l.edges = l.edges[:0]
		}
		queued := 0
		for _, l := range s.lanes {
			queued += len(l.frontier)
		}
		if queued == 0 {
			break
		}
		res.Depth = depth + 1
		if s.opts.Progress != nil && time.Since(lastProgress) >= s.opts.ProgressEvery {
			lastProgress = time.Now()
			s.opts.Progress(Progress{States: len(res.nodes), Queue: queued, Depth: depth + 1,
				Transitions: res.Transitions, Elapsed: time.Since(start)})
		}
	}
	// Each source's edges are in input order (one lane expanded it), as
	// a sequential search finds them; newGraph groups them by source.
	return edges, nil
}

// expand takes every state of the lane's frontier through every input.
func (s *search) expand(l *lane) {
	w, res := s.w, s.res
	frontier := l.frontier
	l.frontier = nil
	for fi, it := range frontier {
		frontier[fi].sim = nil // let the collector take it once expanded
		n := it.node
		if n > s.cutoff.Load() {
			return
		}
		parent := it.sim
		if parent == nil {
			var err error
			if parent, err = s.rebuild(l, n); err != nil {
				l.err = err
				return
			}
		}
		pk := res.nodes[n].key
		if w.steps {
			pk.decodeInto(&l.from, len(w.cfg.Pods))
			l.fromViews = w.viewsInto(l.fromViews, &l.from)
		}
		work := parent.clone()
		for ii, in := range s.inputs {
			offered, err := w.apply(work, in)
			if err != nil {
				s.violated(l, laneViolation{err: err, parent: n, input: int16(ii)})
				break
			}
			if !offered {
				continue // the core did not change
			}
			l.transitions++
			k := w.keyOf(work)
			if k == pk {
				if s.opts.Strict {
					work = parent.cloneInto(work)
				} else {
					work.hist = parent.hist // the explorer's own shell variables follow the path taken
				}
				continue
			}
			if w.steps {
				k.decodeInto(&l.to, len(w.cfg.Pods))
				l.toViews = w.viewsInto(l.toViews, &l.to)
				if err := w.stepPropertiesOn(l.fromViews, l.toViews, &l.from, &l.to); err != nil {
					s.violated(l, laneViolation{err: err, parent: n, input: int16(ii)})
					break
				}
			}
			keep := work
			if s.kept.Load() >= s.maxSims {
				keep = nil // over the budget: the next level rebuilds it
			}
			dst, isNew := s.set.visit(k, n, int16(ii), l.id, keep)
			if isNew && keep != nil {
				s.kept.Add(1)
			}
			if isNew && w.invariants {
				k.decodeInto(&l.to, len(w.cfg.Pods))
				l.toViews = w.viewsInto(l.toViews, &l.to)
				if err := w.invariantsOn(l.toViews, &l.to); err != nil {
					s.violated(l, laneViolation{err: err, parent: n, input: int16(ii), fresh: dst, state: true})
				}
			}
			if s.edges {
				l.edges = append(l.edges, fair.Edge{Src: n, Dst: dst, Input: int16(ii)})
			}
			if isNew && keep != nil {
				work = parent.clone() // work is the new state's now
			} else {
				work = parent.cloneInto(work)
			}
		}
	}
}

// violated records a violation and lowers the cutoff to its parent.
func (s *search) violated(l *lane, v laneViolation) {
	l.violations = append(l.violations, v)
	for {
		c := s.cutoff.Load()
		if v.parent >= c || s.cutoff.CompareAndSwap(c, v.parent) {
			return
		}
	}
}

// rebuild replays node n's shortest path on the lane's own core.
func (s *search) rebuild(l *lane, n int32) (*sim, error) {
	sm := l.root.clone()
	for _, ii := range s.res.path(n) {
		if _, err := s.w.apply(sm, s.inputs[ii]); err != nil {
			return nil, fmt.Errorf("explorer: replaying the path to state %d: %w", n, err)
		}
	}
	if got, want := s.w.keyOf(sm), s.res.nodes[n].key; got != want {
		return nil, fmt.Errorf("explorer: replaying the path to state %d reached %v, not %v: the core is not deterministic", n, got, want)
	}
	return sm, nil
}

// settle numbers the level's new states in sequential order, appends them
// to the nodes, hands them to the lanes as the next frontier (balanced),
// and returns the mapping from their freshRefs to their node numbers.
func (s *search) settle() func(int32) int32 {
	res := s.res
	type ref struct {
		f         *freshState
		shard, at int
	}
	var fresh []ref
	numbers := make([][]int32, setShards)
	for si := range s.set.shards {
		sh := &s.set.shards[si]
		numbers[si] = make([]int32, len(sh.fresh))
		for i := range sh.fresh {
			fresh = append(fresh, ref{&sh.fresh[i], si, i})
		}
	}
	slices.SortFunc(fresh, func(a, b ref) int {
		if a.f.parent != b.f.parent {
			return int(a.f.parent) - int(b.f.parent)
		}
		return int(a.f.input) - int(b.f.input)
	})
	base := int32(len(res.nodes))
	if len(fresh) > 0 {
		res.levels = append(res.levels, base)
	}
	for i, r := range fresh {
		id := base + int32(i)
		res.nodes = append(res.nodes, node{key: r.f.k, parent: r.f.parent, input: r.f.input})
		s.set.settle(r.f.k, id)
		numbers[r.shard][r.at] = id
	}
	// The next frontier: each lane keeps what it found, in node order; a
	// lane over the even share gives its last states to lanes under it,
	// which rebuild them.
	share := (len(fresh) + len(s.lanes) - 1) / len(s.lanes)
	var spare []item
	for i, r := range fresh {
		l := s.lanes[r.f.lane]
		if len(l.frontier) < share {
			l.frontier = append(l.frontier, item{base + int32(i), r.f.sim})
		} else {
			spare = append(spare, item{node: base + int32(i)}) // its simulation is dropped
		}
	}
	for _, l := range s.lanes {
		for len(l.frontier) < share && len(spare) > 0 {
			l.frontier = append(l.frontier, spare[0])
			spare = spare[1:]
		}
	}
	for si := range s.set.shards {
		sh := &s.set.shards[si]
		clear(sh.fresh) // drop the simulations
		sh.fresh = sh.fresh[:0]
	}
	return func(ref int32) int32 {
		si, i := splitFreshRef(ref)
		return numbers[si][i]
	}
}

// firstViolation returns the violation a sequential search would have
// found first in this level, if any.
func (s *search) firstViolation(remap func(int32) int32) *Violation {
	var best *laneViolation
	order := func(v *laneViolation) (int32, int16) {
		if v.state {
			n := s.res.nodes[remap(v.fresh)]
			return n.parent, n.input
		}
		return v.parent, v.input
	}
	for _, l := range s.lanes {
		for i := range l.violations {
			v := &l.violations[i]
			if best == nil {
				best = v
				continue
			}
			bp, bi := order(best)
			vp, vi := order(v)
			if vp < bp || vp == bp && (vi < bi || vi == bi && !v.state && best.state) {
				best = v
			}
		}
		l.violations = nil
	}
	switch {
	case best == nil:
		return nil
	case best.state:
		return s.res.violation(best.err, remap(best.fresh))
	default:
		return s.res.violationAfter(best.err, best.parent, best.input)
	}
}
