package worker

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
)

// TestRandomOperationsKeepInvariants drives the engine with seeded random
// sequences of every input (updates of every kind, kills with and without
// channels, runtime-only kills, SyncKnownPods, timers, scripted failures,
// terminal results and panics) and checks after every settled step:
//   - a completion channel is open only while its pod terminates;
//   - the queries agree with each other (reference 3.4);
//   - within an incarnation the grace periods passed to SyncTerminatingPod
//     never grow and are never below 1;
//   - every ended incarnation called the sync functions in the reference's
//     order (1.9), and calls for one UID never overlapped (the fake syncer);
//   - two static pods with one full name never run at once and start in
//     the order they began waiting (3.5).
func TestRandomOperationsKeepInvariants(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			randomRun(t, seed, 200)
		})
	}
}

func randomRun(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b9))
	cache := newFakeCache()
	inc := &incarnations{static: []types.UID{"s1", "s2"}, bounds: map[types.UID][]int{},
		state: map[types.UID]fsm.State{}, started: map[types.UID]bool{}, staticRec: map[types.UID]bool{}, waitingAt: map[types.UID]int{}}
	e := start(t, Options{StatusCache: cache, Observer: inc})
	inc.syncer = e.syncer
	uids := []types.UID{"s1", "s2", "n1", "n2"}
	pods := map[types.UID]*v1.Pod{
		"s1": newPod("s1", "etcd", true), "s2": newPod("s2", "etcd", true), // one full name
		"n1": newPod("n1", "web", false), "n2": newPod("n2", "db", false),
	}
	var history []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d after %s:\n"+format, append([]any{seed, strings.Join(history, "\n  ")}, args...)...)
	}
	channels := map[types.UID][]chan struct{}{}
	checked := map[types.UID]int{} // incarnations whose calls were checked

	pick := func() types.UID { return uids[rng.IntN(len(uids))] }
	pod := func(uid types.UID) *v1.Pod {
		p := pods[uid]
		switch rng.IntN(10) {
		case 0:
			return deleting(p, int64(rng.IntN(40)))
		case 1:
			return inPhase(p, v1.PodSucceeded)
		}
		return p
	}
	kpo := func(uid types.UID) *KillPodOptions {
		if rng.IntN(3) == 0 {
			return nil
		}
		k := &KillPodOptions{Evict: rng.IntN(4) == 0}
		if rng.IntN(2) == 0 {
			k.PodTerminationGracePeriodSecondsOverride = int64p(int64(rng.IntN(40)))
		}
		if rng.IntN(2) == 0 {
			ch := make(chan struct{})
			k.CompletedCh = ch
			channels[uid] = append(channels[uid], ch)
		}
		return k
	}
	// input returns a random UpdatePod input and its description.
	input := func() (UpdatePodOptions, string) {
		u := pick()
		switch rng.IntN(7) {
		case 0:
			return createOp(pod(u)), "create " + string(u)
		case 1:
			return updateOp(pod(u)), "update " + string(u)
		case 2:
			return syncOp(pod(u)), "sync " + string(u)
		case 3:
			return killOp(pod(u), kpo(u)), "kill " + string(u)
		case 4:
			return runtimeKillOp(string(u), pods[u].Name, kpo(u)), "runtime kill " + string(u)
		case 5:
			o := updateOp(pod(u))
			o.KillPodOptions = kpo(u)
			return o, "update+killopts " + string(u)
		}
		return UpdatePodOptions{UpdateType: SyncPodSync, RunningPod: runningPod(string(u), pods[u].Name)}, "runtime sync " + string(u)
	}
	ops := []func() string{
		func() string {
			// Inputs that all arrive before any worker takes one.
			var did []string
			e.locked(func(c *Core) {
				for range 1 + rng.IntN(3) {
					o, d := input()
					_ = e.w.updatePod(o, e.w.input(&o)) // a runtime-only sync is refused
					did = append(did, d)
				}
				switch rng.IntN(3) {
				case 0:
					c.SyncKnownPods([]*v1.Pod{pods["s1"], pods["n1"]})
					did = append(did, "SyncKnownPods[s1 n1]")
				case 1:
					u := pick()
					c.Timer(u)
					did = append(did, "timer "+string(u))
				}
			})
			e.settle()
			return "locked{" + strings.Join(did, "; ") + "}"
		},
		func() string {
			// Inputs, SyncKnownPods and timers while a call of u is in flight.
			u := pick()
			pz := e.syncer.pauseNext(u)
			o, d := input()
			_ = e.w.UpdatePod(o)
			idle := make(chan struct{})
			go func() { e.w.waitIdle(); close(idle) }()
			select {
			case <-pz.entered:
			case <-idle: // no call began, and none can until the next input
				e.syncer.unpause(u)
				return d + " (no call of " + string(u) + " to pause)"
			}
			did := []string{d}
			for range 1 + rng.IntN(3) {
				switch rng.IntN(6) {
				case 0:
					c := []*v1.Pod{pods["s2"], pods["n2"]}
					e.w.SyncKnownPods(c)
					did = append(did, "SyncKnownPods[s2 n2]")
				case 1:
					e.step(e.backoff() * 3 / 2)
					did = append(did, "step back-off")
				default:
					o, d := input()
					_ = e.w.UpdatePod(o)
					did = append(did, d)
				}
			}
			close(pz.resume)
			<-idle
			return "while a call of " + string(u) + " runs{" + strings.Join(did, "; ") + "}"
		},
		func() string { u := pick(); e.update(createOp(pod(u))); return "create " + string(u) },
		func() string { u := pick(); e.update(updateOp(pod(u))); return "update " + string(u) },
		func() string { u := pick(); e.update(syncOp(pod(u))); return "sync " + string(u) },
		func() string {
			u := pick()
			o := updateOp(pod(u))
			o.KillPodOptions = kpo(u) // meaningless unless terminating
			e.update(o)
			return "update+killopts " + string(u)
		},
		func() string { u := pick(); e.update(killOp(pod(u), kpo(u))); return "kill " + string(u) },
		func() string {
			u := pick()
			e.update(runtimeKillOp(string(u), pods[u].Name, kpo(u)))
			return "runtime kill " + string(u)
		},
		func() string {
			u := pick()
			_ = e.w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodSync, RunningPod: runningPod(string(u), pods[u].Name)})
			e.settle()
			return "runtime sync " + string(u)
		},
		func() string {
			var desired []*v1.Pod
			var names []string
			for _, u := range uids {
				if rng.IntN(4) != 0 {
					desired = append(desired, pods[u])
					names = append(names, string(u))
				}
			}
			e.w.SyncKnownPods(desired)
			e.settle()
			return fmt.Sprintf("SyncKnownPods%v", names)
		},
		func() string { e.advance(e.backoff() * 3 / 2); return "advance back-off" },
		func() string { e.advance(e.resync() * 3 / 2); return "advance resync" },
		func() string {
			u := pick()
			fn := []string{"SyncPod", "SyncTerminatingPod", "SyncTerminatedPod", "SyncTerminatingRuntimePod"}[rng.IntN(4)]
			switch rng.IntN(3) {
			case 0:
				e.syncer.panicNext(u, fn, 1)
				return fmt.Sprintf("next %s of %s panics", fn, u)
			case 1:
				if fn == "SyncPod" {
					e.syncer.script(u, fn, outcome{terminal: true})
					return fmt.Sprintf("next SyncPod of %s is terminal", u)
				}
			}
			e.syncer.script(u, fn, outcome{err: errSync})
			return fmt.Sprintf("next %s of %s fails", fn, u)
		},
		func() string {
			u := pick()
			if rng.IntN(2) == 0 {
				cache.set(u, exitedStatus(u))
				return "cache: " + string(u) + " exited"
			}
			cache.set(u, runningStatus(u))
			return "cache: " + string(u) + " running"
		},
	}

	check := func() {
		t.Helper()
		if v := inc.failures(); len(v) > 0 {
			fail("static pods: %s", strings.Join(v, "; "))
		}
		for _, u := range uids {
			state, _ := e.w.State(u)
			if state != fsm.TerminationRequested && state != fsm.Terminating {
				for i, ch := range channels[u] {
					select {
					case <-ch:
					default:
						fail("pod %s is %s but completion channel %d is open", u, state, i)
					}
				}
			}
			a := answersOf(e.w, u)
			if state != fsm.Absent {
				if a.knownTerminated == a.couldRun || a.runtimeRemoved == a.couldRun ||
					(a.containersTerminating && !a.terminationRequested) || (a.finished && !a.runtimeRemoved) {
					fail("pod %s (%s): inconsistent answers %+v", u, state, a)
				}
			}
			calls := e.syncer.calls(u)
			bounds := inc.of(u)
			for i, b := range bounds {
				end := len(calls)
				if i+1 < len(bounds) {
					end = bounds[i+1]
				}
				var fns []string
				last := int64(-1)
				for _, c := range calls[b:end] {
					fns = append(fns, c.fn)
					if c.fn != "SyncTerminatingPod" || c.grace < 0 {
						continue
					}
					if c.grace < 1 {
						fail("pod %s: grace %d below 1", u, c.grace)
					}
					if last >= 0 && c.grace > last {
						fail("pod %s: grace grew from %d to %d in incarnation %d", u, last, c.grace, i)
					}
					last = c.grace
				}
				ended := i+1 < len(bounds) || state == fsm.Absent
				if ended && i >= checked[u] {
					if got := strings.Join(append(fns, ""), " "); !callLanguage.MatchString(got) {
						fail("pod %s: incarnation %d called %q", u, i, got)
					}
					checked[u] = i + 1
				}
			}
		}
	}
	for range steps {
		history = append(history, ops[rng.IntN(len(ops))]())
		if len(history) > 40 {
			history = history[1:]
		}
		check()
	}
	// Wind down: every pod terminates, every record goes, every incarnation
	// is complete.
	for range 3 {
		for _, u := range uids {
			e.update(killOp(pods[u], kpo(u)))
		}
		for range 4 {
			e.advance(e.backoff() * 3 / 2)
			e.w.SyncKnownPods(nil)
			e.settle()
		}
		check()
	}
	for _, u := range uids {
		e.wantState(u, fsm.Absent)
	}
}

// incarnations is an fsm.Observer that splits each UID's calls into
// incarnations: when a transition creates a record, it notes how many calls
// the fake syncer saw for the UID (no call of a UID is in flight then).
//
// It also checks the static-pod rules (reference 3.5) for the UIDs in
// static, which share one full name, from the transitions alone: a static
// pod starts only when no other of them is started and unfinished, and not
// before another that has been waiting longer.
type incarnations struct {
	syncer *fakeSyncer
	static []types.UID

	mu         sync.Mutex
	bounds     map[types.UID][]int
	seq        int
	state      map[types.UID]fsm.State
	started    map[types.UID]bool
	staticRec  map[types.UID]bool // the record's Static variable
	waitingAt  map[types.UID]int  // when the record entered Waiting
	violations []string
}

func (o *incarnations) Transition(t fsm.Transition) {
	n := -1
	if t.From == fsm.Absent && t.To.HasRecord() {
		n = len(o.syncer.calls(t.Pod))
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if n >= 0 {
		o.bounds[t.Pod] = append(o.bounds[t.Pod], n)
	}
	o.seq++
	if !slices.Contains(o.static, t.Pod) {
		return
	}
	if t.Row == "WaitingDequeueStart" {
		for _, other := range o.static {
			if other == t.Pod {
				continue
			}
			switch s := o.state[other]; {
			// A record created by a runtime-only kill is not static even
			// once its static config arrives, so it holds no slot: see
			// TestRuntimeFirstStaticPodHoldsNoSlot.
			case o.started[other] && o.staticRec[other] && s.HasRecord() && !s.IsFinished():
				o.violations = append(o.violations, fmt.Sprintf("%s started while %s (%s, record Static=%v) holds the full name", t.Pod, other, s, o.staticRec[other]))
			case s == fsm.Waiting && o.waitingAt[other] < o.waitingAt[t.Pod]:
				o.violations = append(o.violations, fmt.Sprintf("%s started before %s, which waited longer", t.Pod, other))
			}
		}
	}
	if t.To == fsm.Waiting && t.From != fsm.Waiting {
		o.waitingAt[t.Pod] = o.seq
	}
	o.state[t.Pod] = t.To
	o.started[t.Pod] = t.Vars.Started
	o.staticRec[t.Pod] = t.Vars.Static
}

func (o *incarnations) failures() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.violations)
}

func (o *incarnations) Rejected(types.UID, fsm.State, fsm.Event, error) {}

func (o *incarnations) of(uid types.UID) []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.bounds[uid])
}
