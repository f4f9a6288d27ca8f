package worker

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/spec"
	"github.com/podlife/podlife/trace"
)

// soak turns TestRapid into a long soak: 5000 rapid checks instead of
// rapid's default 100 (an explicit -rapid.checks still wins). For example:
//
//	go test -race -run TestRapid ./worker -soak -timeout 60m
var soak = flag.Bool("soak", false, "TestRapid: run 5000 rapid checks (a long soak) unless -rapid.checks is given")

// saveTraces keeps every run's trace (trace/testdata/rapid-*.ndjson come
// from it): go test -run TestRapid ./worker -rapid.checks 2 -save-traces DIR
var saveTraces = flag.String("save-traces", "", "TestRapid: write every run's trace (NDJSON) into this directory")

const (
	// rapidSteps is TestRapid's default -rapid.steps (the average number of
	// actions of a run; rapid's own default is 30). With rapid's default
	// 100 checks, `go test -race -run TestRapid ./worker` stays well under
	// a minute on a 2-core machine.
	rapidSteps      = 150
	rapidSoakChecks = 5000

	rapidResync    = 2 * time.Second
	rapidBackoff   = time.Second
	rapidSpecGrace = 30
	rapidFullName  = "etcd_default" // the full name of s1 and s2
	// rapidWatchdog bounds every wait of the test: the engine reaching
	// quiescence, a KillPod call returning, Stop. It only fires when the
	// engine is stuck; it is not a sleep.
	rapidWatchdog = 30 * time.Second
)

// rapidUIDs are the pods of every run, in UID order: two ordinary pods and
// two static pods that share one full name.
var rapidUIDs = []types.UID{"n1", "n2", "s1", "s2"}

var errRapidSync = errors.New("rapid: injected sync failure")

// TestRapid is a state-machine test of the real concurrent PodWorkers
// against the generated lifecycle table (an fsm.Machine of its own, the
// model), driven by pgregory.net/rapid.
//
// The syncer blocks every sync call until the test releases it with an
// outcome, or until its context is cancelled (it then returns ctx.Err()).
// After each action the test waits for quiescence: every running worker
// loop is blocked inside the syncer (w.loops equals the number of blocked
// calls whose context is live). The syncer changes its blocked calls under
// w.mu and broadcasts w.idle, and the engine broadcasts w.idle when a loop
// ends, so the wait on w.idle loses no wake-up; nothing sleeps or polls.
//
// The model is fed the events the test knows it caused, with the params it
// knows it sent: the UpdatePod event, a released call's outcome, the
// Requeue of every record after a clock step beyond every timer, a
// SyncKnownPods; then the failure of every call the action cancelled, then
// a Dequeue of every queued idle record (the engine's worker loops must
// have taken them). After every action the engine must equal the model:
// per pod, the same transitions (rows, states, variables, effects, params;
// the world facts of worker-side events and the Requeue rows that change
// nothing are not compared, as the engine interleaves pods freely and has
// timers only where they matter), the same records, slot holder, waiting
// order and synced flag, query answers that follow from the model's record
// (reference 2.1), a blocked call exactly for each record the model has in
// flight, and every CompletedCh closed exactly when the model no longer
// keeps it (a KillPod returns nil then). Invariants: one sync call at a
// time per UID, at most one holder of the static slot, a static pod's
// SyncPod only while it holds the slot, SyncPod only in Running and
// TerminationRequested, the grace of a blocked SyncTerminatingPod is the
// record's.
//
// Every run ends by driving every pod to removal (kills, successful syncs,
// timers, SyncKnownPods(nil)), stopping the engine, checking that no
// goroutine leaked and that the run's trace passes trace.Check. When a run
// fails, its trace is written to a temporary file and the TLC command that
// replays it is logged.
//
// Actions: UpdatePod (any type; maybe deleted, with or without a deletion
// grace; maybe terminal; maybe kill options with a CompletedCh, eviction
// and a grace override), a runtime-only kill, SyncKnownPods of a random
// subset, releasing a blocked call (success, error, or terminal for
// SyncPod), a clock step, KillPod in a goroutine (with a cancellable
// context, or with context.Background(), which lets KillPod run the pod's
// loop itself), invalid UpdatePods (they must wrap ErrInvalidUpdate, close
// their channel and change nothing), setting the status cache (which
// decides RuntimeTerminal for a pod first seen terminal, reference T2), and
// a burst: two to four inputs given to the Core under one hold of w.mu (as
// tenv.locked does), so that they all arrive before any worker loop takes
// one (rows such as WaitingRequeueIgnored and TerminatedSyncKnownPodsRemove
// need that).
//
// The test logs which table rows fired over all runs. A 5000-check soak
// fires every row but ten, none of which any run of the engine can fire:
// AbsentRequeueIgnored and AbsentSyncKnownPodsIgnored (the engine fires
// neither event for a UID without a record), TerminationRequested*FirstGrace
// (every row into TerminationRequested sets the grace), TerminationRequested
// Requeue (such a record is always queued), and the SyncKnownPods rows of
// WaitingTerminate, RunningRemove and TerminatingRemove (a Waiting record
// never started nor saw the runtime; Running and Terminating ones did).
//
// Defaults: rapid's 100 checks and -rapid.steps=150 (see rapidSteps), about
// 10 s with -race on 2 cores; -soak runs 5000 checks (about 9 minutes).
// Failures are saved under testdata/rapid/TestRapid/ and re-run first by
// later runs; -rapid.failfile or -rapid.seed reproduce one.
func TestRapid(t *testing.T) {
	defer rapidFlagDefaults(t)()
	var failed []byte // the trace of the last failing run
	t.Cleanup(func() {
		// A run can also end early without failing (rapid drops a run whose
		// data ran out, e.g. replaying an outdated fail file).
		if failed == nil || !t.Failed() {
			return
		}
		f, err := os.CreateTemp("", "podlife-rapid-*.ndjson")
		if err == nil {
			_, err = f.Write(failed)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			t.Logf("writing the failing run's trace: %v", err)
			return
		}
		t.Logf("the failing run's trace is %s; validate it in TLC with\n\tTLA2TOOLS_JAR=/path/to/tla2tools.jar tools/tlc.sh --trace %s", f.Name(), f.Name())
	})
	rows := map[string]int{} // rows the model fired, over every run
	defer func() {
		// Rows from Removed never fire in an fsm.Machine: it deletes a
		// removed record, so the UID's next event starts from Absent.
		var total int
		var missed []string
		for _, r := range spec.Table {
			if r.From.String() == "Removed" {
				continue
			}
			total++
			if rows[r.ID] == 0 {
				missed = append(missed, r.ID)
			}
		}
		t.Logf("%d of %d table rows (not from Removed) fired; never: %s", total-len(missed), total, strings.Join(missed, " "))
	}()
	rapid.Check(t, func(rt *rapid.T) {
		h := newRapidHarness(rt)
		h.rows = rows
		defer h.teardown(&failed)
		rt.Repeat(map[string]func(*rapid.T){
			"":              func(*rapid.T) { h.check() },
			"UpdatePod":     h.actUpdatePod,
			"RuntimeKill":   h.actRuntimeKill,
			"SyncKnownPods": h.actSyncKnownPods,
			"Release":       h.actRelease,
			"ClockStep":     h.actClockStep,
			"KillPod":       h.actKillPod,
			"InvalidUpdate": h.actInvalidUpdate,
			"RuntimeStatus": h.actRuntimeStatus,
			"Burst":         h.actBurst,
		})
		h.windDown()
		h.finish()
	})
}

// rapidFlagDefaults sets TestRapid's defaults for the rapid flags the
// command line did not set, and returns a function that restores them.
func rapidFlagDefaults(t *testing.T) func() {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var undo []func()
	def := func(name, value string) {
		f := flag.Lookup(name)
		if f == nil || set[name] {
			return
		}
		old := f.Value.String()
		if err := f.Value.Set(value); err != nil {
			t.Fatalf("-%s=%s: %v", name, value, err)
		}
		undo = append(undo, func() { _ = f.Value.Set(old) })
	}
	def("rapid.steps", strconv.Itoa(rapidSteps))
	if *soak {
		def("rapid.checks", strconv.Itoa(rapidSoakChecks))
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}

// rapidCall is a sync call blocked in the syncer.
type rapidCall struct {
	uid      types.UID
	fn       fsm.InFlight
	ctx      context.Context
	pod      *v1.Pod
	grace    *int64 // SyncTerminatingPod's grace period
	result   chan rapidResult
	released bool // the test released it (guarded by w.mu)
}

type rapidResult struct {
	terminal bool
	err      error
}

// rapidStep is one transition (or rejected event) of the engine or model.
type rapidStep struct {
	t        fsm.Transition
	pod      types.UID
	rejected string
}

// rapidShadow is what the test knows of the engine's podData for a live
// record: the pods whose grace facts the engine reads (Core.SyncKnownPods,
// a runtime-only kill of a known pod).
type rapidShadow struct {
	pending    *v1.Pod
	hasPending bool
	active     *v1.Pod
}

func (s *rapidShadow) lastPod() *v1.Pod {
	switch {
	case s == nil:
		return nil
	case s.hasPending && s.pending != nil:
		return s.pending
	}
	return s.active
}

// rapidChan is a CompletedCh the test handed in: a channel of its own, or
// the one inside a KillPod call.
type rapidChan struct {
	id     int
	uid    types.UID
	ch     chan struct{} // nil for a KillPod's
	killer *rapidKiller
	closed bool // the model released it
}

// rapidKiller is a KillPod call running in a goroutine.
type rapidKiller struct {
	uid      types.UID
	cancel   context.CancelFunc // nil: called with context.Background()
	result   chan error         // capacity 1
	returned bool
}

// rapidIncoming is what an UpdatePod carries that the model's bookkeeping
// needs: the pod the engine keeps (for a runtime-only kill, the known pod)
// and the completion channel.
type rapidIncoming struct {
	pod *v1.Pod
	ch  *rapidChan
}

type rapidHarness struct {
	t      *rapid.T
	w      *PodWorkers
	clock  *clocktesting.FakeClock
	buf    bytes.Buffer // the trace
	ignore goleak.Option
	pods   map[types.UID]*v1.Pod
	cache  *fakeCache
	exited map[types.UID]bool // the cache shows nothing running (else: running)

	// Guarded by w.mu: the syncer and the observer write them.
	blocked   map[types.UID]*rapidCall
	cancelled []*rapidCall // calls that returned through their context
	overlaps  []string
	engine    []rapidStep // the engine's transitions since the last comparison
	kills     int         // Kill transitions seen

	// The model side; the test goroutine only.
	model   *fsm.Machine
	steps   []rapidStep // the model's transitions since the last comparison
	shadow  map[types.UID]*rapidShadow
	chans   []*rapidChan
	kept    map[types.UID][]*rapidChan
	cancels map[types.UID]bool // calls the current action must cancel
	killers []*rapidKiller
	rows    map[string]int
	done    bool
}

func newRapidHarness(t *rapid.T) *rapidHarness {
	h := &rapidHarness{
		t:       t,
		clock:   clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0)),
		ignore:  goleak.IgnoreCurrent(), // before the engine starts
		blocked: map[types.UID]*rapidCall{},
		model:   fsm.New(nil),
		shadow:  map[types.UID]*rapidShadow{},
		kept:    map[types.UID][]*rapidChan{},
		cancels: map[types.UID]bool{},
		pods:    map[types.UID]*v1.Pod{},
		cache:   newFakeCache(),
		exited:  map[types.UID]bool{},
	}
	for _, uid := range rapidUIDs {
		name, source := map[types.UID]string{"n1": "web", "n2": "db", "s1": "etcd", "s2": "etcd"}[uid], "api"
		if strings.HasPrefix(string(uid), "s") {
			source = "file"
		}
		grace := int64(rapidSpecGrace)
		h.pods[uid] = &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{UID: uid, Name: name, Namespace: "default", Annotations: map[string]string{ConfigSourceAnnotation: source}},
			Spec:       v1.PodSpec{TerminationGracePeriodSeconds: &grace},
		}
	}
	h.w = New(rapidSyncer{h}, Options{
		Clock: h.clock, ResyncInterval: rapidResync, BackOffPeriod: rapidBackoff, StatusCache: h.cache,
		Observer: &rapidObserver{h: h, tw: trace.NewWriter(&h.buf)},
	})
	return h
}

// The syncer.

type rapidSyncer struct{ h *rapidHarness }

func (s rapidSyncer) SyncPod(ctx context.Context, _ UpdateType, pod, _ *v1.Pod, _ *PodStatus) (bool, error) {
	return s.h.block(ctx, fsm.InFlightSyncPod, pod.UID, pod, nil)
}

func (s rapidSyncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, _ *PodStatus, grace *int64, _ func(*v1.PodStatus)) error {
	_, err := s.h.block(ctx, fsm.InFlightSyncTerminatingPod, pod.UID, pod, grace)
	return err
}

func (s rapidSyncer) SyncTerminatingRuntimePod(ctx context.Context, rp *RunningPod) error {
	_, err := s.h.block(ctx, fsm.InFlightSyncTerminatingRuntimePod, rp.ID, nil, nil)
	return err
}

func (s rapidSyncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, _ *PodStatus) error {
	_, err := s.h.block(ctx, fsm.InFlightSyncTerminatedPod, pod.UID, pod, nil)
	return err
}

// block registers a call and waits until the test releases it or its
// context is cancelled. Both changes of the blocked calls happen under w.mu
// and broadcast w.idle, so a quiescence waiter cannot miss them.
func (h *rapidHarness) block(ctx context.Context, fn fsm.InFlight, uid types.UID, pod *v1.Pod, grace *int64) (bool, error) {
	c := &rapidCall{uid: uid, fn: fn, ctx: ctx, pod: pod, result: make(chan rapidResult, 1)}
	if grace != nil {
		g := *grace
		c.grace = &g
	}
	h.w.mu.Lock()
	if prev := h.blocked[uid]; prev != nil {
		h.overlaps = append(h.overlaps, fmt.Sprintf("pod %s: %s began while %s was blocked", uid, fn, prev.fn))
	}
	h.blocked[uid] = c
	h.w.idle.Broadcast()
	h.w.mu.Unlock()
	select {
	case r := <-c.result:
		return r.terminal, r.err
	case <-ctx.Done():
	}
	h.w.mu.Lock()
	released := c.released
	if !released {
		if h.blocked[uid] == c {
			delete(h.blocked, uid)
		}
		h.cancelled = append(h.cancelled, c)
		h.w.idle.Broadcast()
	}
	h.w.mu.Unlock()
	if released { // released and cancelled at once: the release was first
		r := <-c.result
		return r.terminal, r.err
	}
	return false, ctx.Err()
}

// The observer: the trace writer, plus the engine's transitions for the
// comparison. The machine calls it with w.mu held.

type rapidObserver struct {
	h  *rapidHarness
	tw *trace.Writer
}

func (o *rapidObserver) Transition(t fsm.Transition) {
	o.tw.Transition(t)
	o.h.engine = append(o.h.engine, rapidStep{t: t, pod: t.Pod})
	if t.Event == fsm.Kill {
		o.h.kills++
		o.h.w.idle.Broadcast()
	}
}

func (o *rapidObserver) Rejected(uid types.UID, s fsm.State, ev fsm.Event, err error) {
	o.tw.Rejected(uid, s, ev, err)
	o.h.engine = append(o.h.engine, rapidStep{pod: uid, rejected: fmt.Sprintf("%s in %s: %v", ev, s, err)})
}

// Waiting.

// waitFor waits on w.idle until cond (evaluated with w.mu held) holds, or
// fails the run after rapidWatchdog.
func (h *rapidHarness) waitFor(what string, cond func() bool) {
	fired := false
	timer := time.AfterFunc(rapidWatchdog, func() {
		h.w.mu.Lock()
		fired = true
		h.w.idle.Broadcast()
		h.w.mu.Unlock()
	})
	defer timer.Stop()
	h.w.mu.Lock()
	for !fired && !cond() {
		h.w.idle.Wait()
	}
	var state string
	if fired {
		state = h.describeLocked()
	}
	h.w.mu.Unlock()
	if fired {
		stacks := make([]byte, 1<<20)
		stacks = stacks[:runtime.Stack(stacks, true)]
		h.t.Logf("goroutines:\n%s", stacks)
		h.t.Fatalf("%s: not reached after %v; %s", what, rapidWatchdog, state)
	}
}

// liveBlockedLocked counts the blocked calls whose context is live: the
// others are about to return.
func (h *rapidHarness) liveBlockedLocked() int {
	n := 0
	for _, c := range h.blocked {
		if c.ctx.Err() == nil {
			n++
		}
	}
	return n
}

func (h *rapidHarness) describeLocked() string {
	var calls []string
	for _, uid := range slices.Sorted(maps.Keys(h.blocked)) {
		c := h.blocked[uid]
		calls = append(calls, fmt.Sprintf("%s/%s(ctx err %v)", uid, c.fn, c.ctx.Err()))
	}
	return fmt.Sprintf("worker loops %d, blocked calls %v", h.w.loops, calls)
}

// quiesce waits until every worker loop is blocked in the syncer.
func (h *rapidHarness) quiesce() {
	h.waitFor("quiescence", func() bool { return h.w.loops == h.liveBlockedLocked() })
}

// settle ends an action: quiescence, then the model follows the engine's
// own steps (the failure of every cancelled call, a Dequeue of every queued
// idle record), then both sides' transitions are compared.
func (h *rapidHarness) settle() {
	h.t.Helper()
	h.quiesce()
	h.w.mu.Lock()
	cancelled := h.cancelled
	h.cancelled = nil
	h.w.mu.Unlock()
	got := map[types.UID]bool{}
	for _, c := range cancelled {
		got[c.uid] = true
	}
	if !maps.Equal(got, h.cancels) {
		h.t.Fatalf("cancelled calls: the engine cancelled %v, the model %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(h.cancels)))
	}
	h.cancels = map[types.UID]bool{}
	slices.SortFunc(cancelled, func(a, b *rapidCall) int { return strings.Compare(string(a.uid), string(b.uid)) })
	for _, c := range cancelled {
		h.fire(c.uid, "", rapidOutcomeEvent(c.fn, false, true), rapidNoParams, nil)
	}
	for progressed := true; progressed; {
		progressed = false
		for _, uid := range rapidUIDs {
			if r, ok := h.model.Get(uid); ok && r.Vars.Pending == fsm.PendingQueued && r.Vars.InFlight == fsm.InFlightNone {
				h.fire(uid, "", fsm.Dequeue, rapidNoParams, nil)
				progressed = true
			}
		}
	}
	h.w.mu.Lock()
	engine := h.engine
	h.engine = nil
	h.w.mu.Unlock()
	h.compareSteps(engine)
}

// The model.

var rapidNoParams = fsm.Params{GraceOverride: fsm.NoGrace}

// fire fires an event in the model and does the bookkeeping the engine does
// for the transition (Core.apply): the shadow podData, kill channels kept
// or released, and the calls the transition cancels.
func (h *rapidHarness) fire(uid types.UID, fullName string, ev fsm.Event, p fsm.Params, in *rapidIncoming) {
	h.t.Helper()
	before, _ := h.model.Get(uid)
	t, err := h.model.Fire(uid, fullName, ev, p)
	if err != nil {
		h.steps = append(h.steps, rapidStep{pod: uid, rejected: fmt.Sprintf("%s in %s: %v", ev, before.State, err)})
		h.t.Fatalf("the model rejected %s for %s: %v", ev, uid, err)
	}
	h.steps = append(h.steps, rapidStep{t: t, pod: uid})
	h.rows[t.Row]++
	h.apply(before, t, in)
}

func (h *rapidHarness) apply(before fsm.Record, t fsm.Transition, in *rapidIncoming) {
	uid, e := t.Pod, t.Effects
	// An outside event that cancels, ends or removes a record with a call
	// in flight cancels that call (a call's own outcome ends it).
	if t.Event.External() && (e.Has(fsm.Cancel) || e.Has(fsm.Exit) || t.To == fsm.Removed) && before.Vars.InFlight != fsm.InFlightNone {
		h.cancels[uid] = true
	}
	sp := h.shadow[uid]
	if sp == nil && in != nil && t.To.HasRecord() && !t.To.IsFinished() {
		sp = &rapidShadow{}
		h.shadow[uid] = sp
	}
	if in != nil {
		switch {
		case sp == nil:
			h.release(in.ch)
		default:
			if e.Has(fsm.TakeUpdate) {
				sp.pending, sp.hasPending = in.pod, true
			}
			if in.ch != nil {
				if e.Has(fsm.KeepNotify) {
					h.kept[uid] = append(h.kept[uid], in.ch)
				} else {
					h.release(in.ch)
				}
			}
		}
	}
	if sp == nil {
		return
	}
	if e.Has(fsm.CloseWaiters) || e.Has(fsm.Exit) || t.To == fsm.Removed {
		for _, c := range h.kept[uid] {
			h.release(c)
		}
		delete(h.kept, uid)
	}
	if e.Has(fsm.Exit) || t.To == fsm.Removed {
		delete(h.shadow, uid)
		return
	}
	if t.Event == fsm.Dequeue && e.Has(fsm.Start) {
		if sp.hasPending && sp.pending != nil {
			sp.active = sp.pending
		}
		sp.pending, sp.hasPending = nil, false
	}
}

func (h *rapidHarness) release(c *rapidChan) {
	if c != nil {
		c.closed = true
	}
}

// newChan registers a completion channel handed to the engine.
func (h *rapidHarness) newChan(uid types.UID, k *rapidKiller) *rapidChan {
	c := &rapidChan{id: len(h.chans), uid: uid, killer: k}
	if k == nil {
		c.ch = make(chan struct{})
	}
	h.chans = append(h.chans, c)
	return c
}

// rapidGrace are the grace facts of an update (reference 1.6): the smaller
// of the pod's deletion grace and the kill's override (override < 0: none),
// and the pod's spec value (0 without a pod).
func rapidGrace(pod *v1.Pod, override int64) (graceOverride, spec int64) {
	graceOverride = fsm.NoGrace
	if pod != nil && pod.DeletionGracePeriodSeconds != nil {
		graceOverride = *pod.DeletionGracePeriodSeconds
	}
	if override >= 0 && (graceOverride == fsm.NoGrace || override < graceOverride) {
		graceOverride = override
	}
	if pod != nil {
		spec = rapidSpecGrace
	}
	return graceOverride, spec
}

func rapidOutcomeEvent(fn fsm.InFlight, terminal, failed bool) fsm.Event {
	switch fn {
	case fsm.InFlightSyncPod:
		switch {
		case failed:
			return fsm.SyncPodFailed
		case terminal:
			return fsm.SyncPodTerminal
		}
		return fsm.SyncPodDone
	case fsm.InFlightSyncTerminatingPod, fsm.InFlightSyncTerminatingRuntimePod:
		if failed {
			return fsm.TerminatingFailed
		}
		return fsm.TerminatingDone
	}
	if failed {
		return fsm.TerminatedFailed
	}
	return fsm.TerminatedDone
}

// The actions.

var rapidUpdateTypes = []UpdateType{SyncPodUpdate, SyncPodSync, SyncPodCreate, SyncPodKill}

var rapidEvents = map[UpdateType]fsm.Event{SyncPodSync: fsm.Sync, SyncPodUpdate: fsm.Update, SyncPodCreate: fsm.Create, SyncPodKill: fsm.Kill}

// drawPod draws a variant of a pod: maybe deleted (with or without a
// deletion grace period), maybe in a terminal phase.
func (h *rapidHarness) drawPod(t *rapid.T, uid types.UID) (*v1.Pod, string) {
	p := h.pods[uid].DeepCopy()
	var desc []string
	if rapid.IntRange(0, 3).Draw(t, "deleting") == 3 {
		ts := metav1.NewTime(time.Unix(1_700_000_000, 0))
		p.DeletionTimestamp = &ts
		desc = append(desc, "deleting")
		if g := rapid.SampledFrom([]int64{-1, 0, 1, 2, 3, 45}).Draw(t, "deletionGrace"); g >= 0 {
			p.DeletionGracePeriodSeconds = &g
			desc = append(desc, fmt.Sprintf("grace %d", g))
		}
	}
	if rapid.IntRange(0, 5).Draw(t, "terminalPhase") == 5 {
		p.Status.Phase = v1.PodSucceeded
		desc = append(desc, "Succeeded")
	}
	return p, strings.Join(desc, " ")
}

// drawKillOptions draws optional kill options with a CompletedCh, an
// optional eviction and an optional grace override (0..3).
func (h *rapidHarness) drawKillOptions(t *rapid.T, uid types.UID) (*KillPodOptions, *rapidChan, int64, string) {
	if !rapid.Bool().Draw(t, "killOptions") {
		return nil, nil, -1, ""
	}
	c := h.newChan(uid, nil)
	kpo := &KillPodOptions{CompletedCh: c.ch, Evict: rapid.Bool().Draw(t, "evict")}
	override := rapid.IntRange(-1, 3).Draw(t, "override")
	if override >= 0 {
		kpo.PodTerminationGracePeriodSecondsOverride = int64p(int64(override))
	}
	return kpo, c, int64(override), fmt.Sprintf("kill options (ch %d, evict %v, override %d)", c.id, kpo.Evict, override)
}

func (h *rapidHarness) podParams(pod *v1.Pod, kpo *KillPodOptions, override int64) fsm.Params {
	p := fsm.Params{
		Static:        pod.Annotations[ConfigSourceAnnotation] != "api",
		Deleting:      pod.DeletionTimestamp != nil,
		TerminalPhase: pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed,
	}
	// The engine reads the status cache only for a pod it sees for the
	// first time in a terminal phase (reference T2).
	if _, known := h.model.Get(pod.UID); !known && p.TerminalPhase {
		p.RuntimeTerminal = h.exited[pod.UID]
	}
	p.GraceOverride, p.SpecGrace = rapidGrace(pod, override)
	if kpo != nil {
		p.Notify = kpo.CompletedCh != nil
		p.Evict = kpo.Evict
	}
	return p
}

func (h *rapidHarness) fullName(pod *v1.Pod) string {
	if pod.Annotations[ConfigSourceAnnotation] != "api" {
		return FullName(pod.Name, pod.Namespace)
	}
	return ""
}

// rapidOp is one input: what the engine is given, and what the model
// fires for it. Apart, so that a burst can give the engine several inputs
// under one hold of w.mu before the model follows them in order.
type rapidOp struct {
	desc   string
	public func() error        // through the PodWorkers method
	engine func(c *Core) error // the same through the Core, with w.mu held
	model  func()
}

func (h *rapidHarness) actUpdatePod(t *rapid.T) { h.do(h.drawUpdate(t)) }

func (h *rapidHarness) actRuntimeKill(t *rapid.T) { h.do(h.drawRuntimeKill(t)) }

func (h *rapidHarness) actSyncKnownPods(t *rapid.T) { h.do(h.drawSyncKnownPods(t)) }

// actBurst gives the engine two to four inputs (updates, runtime-only
// kills, a pod's timer, SyncKnownPods) under one hold of w.mu: they all
// arrive before any worker loop can take one, as tenv.locked does.
func (h *rapidHarness) actBurst(t *rapid.T) {
	var ops []rapidOp
	for range rapid.IntRange(2, 4).Draw(t, "burst") {
		switch rapid.IntRange(0, 3).Draw(t, "input") {
		case 0:
			ops = append(ops, h.drawUpdate(t))
		case 1:
			ops = append(ops, h.drawRuntimeKill(t))
		case 2:
			uid := rapid.SampledFrom(rapidUIDs).Draw(t, "pod")
			ops = append(ops, rapidOp{
				desc:   "timer " + string(uid),
				public: func() error { return errors.New("a timer only fires in a burst") },
				engine: func(c *Core) error { c.Timer(uid); return nil },
				model: func() {
					if _, ok := h.model.Get(uid); ok {
						h.fire(uid, "", fsm.Requeue, rapidNoParams, nil)
					}
				},
			})
		default:
			ops = append(ops, h.drawSyncKnownPods(t))
		}
	}
	h.do(ops...)
}

// do gives the engine one op through PodWorkers, or several through the
// Core under one hold of w.mu; then the model follows them in order, then
// the action settles.
func (h *rapidHarness) do(ops ...rapidOp) {
	h.t.Helper()
	var descs []string
	for _, op := range ops {
		descs = append(descs, op.desc)
	}
	errs := make([]error, len(ops))
	if len(ops) == 1 {
		h.t.Logf("%s", descs[0])
		errs[0] = ops[0].public()
	} else {
		h.t.Logf("burst{%s}", strings.Join(descs, "; "))
		h.w.mu.Lock()
		for i, op := range ops {
			errs[i] = op.engine(h.w.core)
		}
		h.w.mu.Unlock()
	}
	for i, op := range ops {
		if errs[i] != nil {
			h.t.Fatalf("%s: %v", op.desc, errs[i])
		}
		op.model()
	}
	h.settle()
}

func (h *rapidHarness) drawUpdate(t *rapid.T) rapidOp {
	uid := rapid.SampledFrom(rapidUIDs).Draw(t, "pod")
	typ := rapid.SampledFrom(rapidUpdateTypes).Draw(t, "type")
	pod, podDesc := h.drawPod(t, uid)
	kpo, ch, override, kpoDesc := h.drawKillOptions(t, uid)
	op := h.updateOp(UpdatePodOptions{UpdateType: typ, Pod: pod, KillPodOptions: kpo}, ch, override)
	op.desc = fmt.Sprintf("UpdatePod(%s %s %s %s)", typ, uid, podDesc, kpoDesc)
	return op
}

// updateOp is a valid UpdatePod with a pod.
func (h *rapidHarness) updateOp(o UpdatePodOptions, ch *rapidChan, override int64) rapidOp {
	return rapidOp{
		desc:   fmt.Sprintf("UpdatePod(%s %s)", o.UpdateType, o.Pod.UID),
		public: func() error { return h.w.UpdatePod(o) },
		engine: func(c *Core) error { return c.UpdatePod(o) },
		model: func() {
			h.fire(o.Pod.UID, h.fullName(o.Pod), rapidEvents[o.UpdateType], h.podParams(o.Pod, o.KillPodOptions, override), &rapidIncoming{pod: o.Pod, ch: ch})
		},
	}
}

// update sends a valid UpdatePod with a pod through PodWorkers.UpdatePod.
func (h *rapidHarness) update(o UpdatePodOptions, ch *rapidChan, override int64) {
	h.t.Helper()
	h.do(h.updateOp(o, ch, override))
}

func (h *rapidHarness) drawRuntimeKill(t *rapid.T) rapidOp {
	uid := rapid.SampledFrom(rapidUIDs).Draw(t, "pod")
	kpo, ch, override, kpoDesc := h.drawKillOptions(t, uid)
	o := UpdatePodOptions{UpdateType: SyncPodKill, RunningPod: &RunningPod{ID: uid, Name: h.pods[uid].Name, Namespace: "default"}, KillPodOptions: kpo}
	return rapidOp{
		desc:   fmt.Sprintf("UpdatePod(runtime-only kill %s %s)", uid, kpoDesc),
		public: func() error { return h.w.UpdatePod(o) },
		engine: func(c *Core) error { return c.UpdatePod(o) },
		model: func() {
			// A runtime-only kill of a pod whose config the engine knows
			// kills that pod: its grace facts are the known pod's.
			known := h.shadow[uid].lastPod()
			p := rapidNoParams
			p.GraceOverride, p.SpecGrace = rapidGrace(known, override)
			p.Notify = ch != nil
			h.fire(uid, "", fsm.RuntimeKill, p, &rapidIncoming{pod: known, ch: ch})
		},
	}
}

func (h *rapidHarness) drawSyncKnownPods(t *rapid.T) rapidOp {
	var desired []*v1.Pod
	for _, uid := range rapidUIDs {
		if rapid.Bool().Draw(t, "desired "+string(uid)) {
			desired = append(desired, h.pods[uid])
		}
	}
	return h.syncKnownPodsOp(desired)
}

// syncKnownPodsOp is SyncKnownPods(desired); the model checks what it
// returned.
func (h *rapidHarness) syncKnownPodsOp(desired []*v1.Pod) rapidOp {
	want := map[types.UID]bool{}
	for _, p := range desired {
		want[p.UID] = true
	}
	var got map[types.UID]PodWorkerSync
	return rapidOp{
		desc:   fmt.Sprintf("SyncKnownPods(%v)", slices.Sorted(maps.Keys(want))),
		public: func() error { got = h.w.SyncKnownPods(desired); return nil },
		engine: func(c *Core) error { got = c.SyncKnownPods(desired); return nil },
		model: func() {
			var before fsm.Record
			err := h.model.SyncKnownPods(func(uid types.UID) fsm.Params {
				before, _ = h.model.Get(uid)
				p := fsm.Params{Orphan: !want[uid]}
				p.GraceOverride, p.SpecGrace = rapidGrace(h.shadow[uid].lastPod(), -1)
				return p
			}, func(t fsm.Transition) {
				h.steps = append(h.steps, rapidStep{t: t, pod: t.Pod})
				h.rows[t.Row]++
				h.apply(before, t, nil)
			})
			if err != nil {
				h.t.Fatalf("the model's SyncKnownPods: %v", err)
			}
			wantMap := map[types.UID]PodWorkerSync{}
			h.model.Range(func(uid types.UID, r fsm.Record) bool {
				s := SyncPod
				switch {
				case r.State.IsTerminated():
					s = TerminatedPod
				case r.State.TerminationRequested():
					s = TerminatingPod
				}
				wantMap[uid] = PodWorkerSync{State: s, Orphan: !want[uid], HasConfig: r.Vars.HasConfig, Static: r.Vars.Static}
				return true
			})
			if !maps.Equal(got, wantMap) {
				h.t.Fatalf("SyncKnownPods returned %v, the model has %v", got, wantMap)
			}
		},
	}
}

// syncKnownPods calls PodWorkers.SyncKnownPods.
func (h *rapidHarness) syncKnownPods(desired []*v1.Pod) {
	h.t.Helper()
	h.do(h.syncKnownPodsOp(desired))
}

func (h *rapidHarness) actRelease(t *rapid.T) {
	uids := h.inFlight()
	if len(uids) == 0 {
		t.Skip("no call is blocked")
	}
	uid := rapid.SampledFrom(uids).Draw(t, "call")
	r, _ := h.model.Get(uid)
	outcomes := []string{"success", "error"}
	if r.Vars.InFlight == fsm.InFlightSyncPod {
		outcomes = append(outcomes, "terminal")
	}
	h.releaseCall(uid, rapid.SampledFrom(outcomes).Draw(t, "outcome"))
}

// inFlight lists the pods the model has a sync call in flight for.
func (h *rapidHarness) inFlight() []types.UID {
	var uids []types.UID
	for _, uid := range rapidUIDs {
		if r, ok := h.model.Get(uid); ok && r.Vars.InFlight != fsm.InFlightNone {
			uids = append(uids, uid)
		}
	}
	return uids
}

func (h *rapidHarness) releaseCall(uid types.UID, outcome string) {
	h.t.Helper()
	h.w.mu.Lock()
	c := h.blocked[uid]
	if c != nil {
		c.released = true
		delete(h.blocked, uid)
		res := rapidResult{terminal: outcome == "terminal"}
		if outcome == "error" {
			res.err = errRapidSync
		}
		c.result <- res
	}
	h.w.mu.Unlock()
	if c == nil {
		h.t.Fatalf("release %s: no call of %s is blocked", outcome, uid)
	}
	h.t.Logf("release %s/%s: %s", uid, c.fn, outcome)
	h.fire(uid, "", rapidOutcomeEvent(c.fn, outcome == "terminal", outcome == "error"), rapidNoParams, nil)
	h.settle()
}

func (h *rapidHarness) actClockStep(*rapid.T) { h.clockStep() }

// clockStep moves the clock beyond every timer (they are jittered up to
// 1.5 times the resync or back-off period): every record's timer fires.
func (h *rapidHarness) clockStep() {
	h.t.Helper()
	h.t.Logf("clock step")
	h.clock.Step(3 * max(rapidResync, rapidBackoff))
	h.w.fireDue()
	for _, uid := range rapidUIDs {
		if _, ok := h.model.Get(uid); ok {
			h.fire(uid, "", fsm.Requeue, rapidNoParams, nil)
		}
	}
	h.settle()
}

func (h *rapidHarness) actKillPod(t *rapid.T) {
	uid := rapid.SampledFrom(rapidUIDs).Draw(t, "pod")
	pod, podDesc := h.drawPod(t, uid)
	evict := rapid.Bool().Draw(t, "evict")
	override := int64(rapid.IntRange(-1, 3).Draw(t, "override"))
	background := rapid.Bool().Draw(t, "backgroundContext")
	var overrideP *int64
	if override >= 0 {
		overrideP = &override
	}
	k := &rapidKiller{uid: uid, result: make(chan error, 1)}
	ctx := context.Background()
	if !background {
		ctx, k.cancel = context.WithCancel(ctx)
	}
	c := h.newChan(uid, k)
	h.killers = append(h.killers, k)
	t.Logf("KillPod(%s %s evict %v override %d background %v) (ch %d)", uid, podDesc, evict, override, background, c.id)
	h.w.mu.Lock()
	want := h.kills + 1
	h.w.mu.Unlock()
	go func() { k.result <- h.w.KillPod(ctx, pod, evict, overrideP, nil) }()
	h.waitFor("KillPod's UpdatePod", func() bool { return h.kills >= want })
	p := h.podParams(pod, nil, override)
	p.Notify, p.Evict = true, evict
	h.fire(uid, h.fullName(pod), fsm.Kill, p, &rapidIncoming{pod: pod, ch: c})
	h.settle()
}

// actRuntimeStatus sets what the status cache shows for a pod: running
// containers, or nothing running.
func (h *rapidHarness) actRuntimeStatus(t *rapid.T) {
	uid := rapid.SampledFrom(rapidUIDs).Draw(t, "pod")
	exited := rapid.Bool().Draw(t, "exited")
	t.Logf("status cache: %s exited %v", uid, exited)
	if exited {
		h.cache.set(uid, exitedStatus(uid))
	} else {
		h.cache.set(uid, runningStatus(uid))
	}
	h.exited[uid] = exited
	h.settle()
}

func (h *rapidHarness) actInvalidUpdate(t *rapid.T) {
	uid := rapid.SampledFrom(rapidUIDs).Draw(t, "pod")
	kind := rapid.IntRange(0, 8).Draw(t, "invalid")
	pod := h.pods[uid].DeepCopy()
	o := UpdatePodOptions{UpdateType: rapid.SampledFrom(rapidUpdateTypes).Draw(t, "type"), Pod: pod}
	var ch *rapidChan
	if rapid.Bool().Draw(t, "withChannel") {
		ch = h.newChan(uid, nil)
		o.KillPodOptions = &KillPodOptions{CompletedCh: ch.ch}
	}
	var desc string
	runtimeNonKill := false
	switch kind {
	case 0:
		o.UpdateType, desc = 7, "unknown update type 7"
	case 1:
		o.UpdateType, desc = -1, "unknown update type -1"
	case 2:
		o.Pod, desc = nil, "neither Pod nor RunningPod"
	case 3:
		pod.UID, desc = "", "empty UID"
	case 4:
		ts := metav1.NewTime(time.Unix(1_700_000_000, 0))
		pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds, desc = &ts, int64p(-1), "negative deletion grace"
	case 5:
		if o.KillPodOptions == nil {
			o.KillPodOptions = &KillPodOptions{}
		}
		o.KillPodOptions.PodTerminationGracePeriodSecondsOverride, desc = int64p(-2), "negative grace override"
	case 6:
		pod.Spec.TerminationGracePeriodSeconds, desc = int64p(-3), "negative spec grace"
	case 7:
		o.Pod, o.RunningPod, desc = nil, &RunningPod{ID: uid}, "runtime-only "+o.UpdateType.String()
		if o.UpdateType == SyncPodKill {
			o.UpdateType = SyncPodSync
			desc = "runtime-only sync"
		}
		runtimeNonKill = true
	case 8:
		o.Pod, o.UpdateType, o.RunningPod, desc = nil, SyncPodKill, &RunningPod{Name: "x"}, "runtime-only pod without UID"
	}
	t.Logf("invalid UpdatePod(%s, %s)", uid, desc)
	err := h.w.UpdatePod(o)
	if !errors.Is(err, ErrInvalidUpdate) {
		h.t.Fatalf("invalid UpdatePod (%s) returned %v, want an error wrapping ErrInvalidUpdate", desc, err)
	}
	if runtimeNonKill { // fired as RuntimeUpdate, which every state ignores
		h.fire(uid, "", fsm.RuntimeUpdate, rapidNoParams, nil)
	}
	h.release(ch) // closed at once
	h.settle()
}

// windDown drives every pod to removal: kills, successful syncs, timers
// and SyncKnownPods(nil), each followed by the full check. Every pod must
// get there within a few rounds, and every KillPod return.
func (h *rapidHarness) windDown() {
	h.t.Logf("wind down")
	for round := 0; ; round++ {
		if h.model.Len() == 0 && len(h.inFlight()) == 0 {
			break
		}
		if round == 5 {
			h.t.Fatalf("wind down: %d records left after %d rounds", h.model.Len(), round)
		}
		for _, uid := range rapidUIDs {
			if r, ok := h.model.Get(uid); ok && !r.State.IsFinished() {
				h.update(UpdatePodOptions{UpdateType: SyncPodKill, Pod: h.pods[uid]}, nil, -1)
				h.check()
			}
		}
		for range 8 {
			uids := h.inFlight()
			if len(uids) == 0 {
				break
			}
			for _, uid := range uids {
				h.releaseCall(uid, "success")
				h.check()
			}
		}
		h.clockStep()
		h.check()
		h.syncKnownPods(nil)
		h.check()
	}
	for _, k := range h.killers {
		if !k.returned {
			h.t.Fatalf("KillPod(%s) has not returned after the wind-down", k.uid)
		}
	}
}

// finish stops the engine, then checks for leaked goroutines and the trace.
func (h *rapidHarness) finish() {
	h.stop()
	h.done = true
	if err := goleak.Find(h.ignore); err != nil {
		h.t.Fatalf("goroutines leaked: %v", err)
	}
	if err := h.checkTrace(); err != nil {
		h.done = false // teardown saves the trace
		h.t.Fatalf("%v", err)
	}
	if *saveTraces != "" {
		f, err := os.CreateTemp(*saveTraces, "rapid-*.ndjson")
		if err != nil {
			h.t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(h.buf.Bytes()); err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *rapidHarness) checkTrace() error {
	lines, err := trace.Read(bytes.NewReader(h.buf.Bytes()))
	if err != nil {
		return fmt.Errorf("reading the trace: %w", err)
	}
	if err := trace.Check(lines); err != nil {
		return fmt.Errorf("the trace does not pass trace.Check: %w", err)
	}
	return nil
}

// stop stops the engine (Stop cancels every blocked call), failing the run
// if it does not return in time.
func (h *rapidHarness) stop() {
	stopped := make(chan struct{})
	go func() {
		h.w.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(rapidWatchdog):
		h.t.Fatalf("Stop did not return after %v", rapidWatchdog)
	}
}

// teardown runs when the run ends, also by a failure: it stops the engine
// and KillPod calls, and keeps the trace of a run that did not finish
// (TestRapid writes it to a file if the test failed).
func (h *rapidHarness) teardown(failed *[]byte) {
	if h.done {
		return
	}
	stopped := make(chan struct{})
	go func() {
		h.w.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
		*failed = slices.Clone(h.buf.Bytes())
		if err := h.checkTrace(); err != nil {
			h.t.Logf("%v", err)
		}
	case <-time.After(rapidWatchdog):
		h.t.Logf("Stop did not return after %v; the trace is not saved", rapidWatchdog)
	}
	for _, k := range h.killers {
		if k.cancel != nil {
			k.cancel()
		}
	}
}

// The check after every action.

func (h *rapidHarness) check() {
	h.t.Helper()
	type engineView struct {
		rec   fsm.Record
		known bool
	}
	eng := map[types.UID]engineView{}
	h.w.mu.Lock()
	for _, uid := range rapidUIDs {
		r, ok := h.w.core.Record(uid)
		eng[uid] = engineView{r, ok}
	}
	n := h.w.core.machine.Len()
	holder, held := h.w.core.machine.SlotHolder(rapidFullName)
	waiting := h.w.core.Waiting(rapidFullName)
	synced := h.w.core.Synced()
	slotHolders := 0
	h.w.core.machine.Range(func(_ types.UID, r fsm.Record) bool {
		if r.FullName == rapidFullName && r.Vars.Static && r.Vars.Started && r.State.MayHoldSlot() {
			slotHolders++
		}
		return true
	})
	blocked := maps.Clone(h.blocked)
	overlaps := slices.Clone(h.overlaps)
	loops := h.w.loops
	h.w.mu.Unlock()

	if len(overlaps) > 0 {
		h.t.Fatalf("sync calls overlapped: %s", strings.Join(overlaps, "; "))
	}
	if loops != len(blocked) {
		h.t.Fatalf("%d worker loops but %d blocked calls after quiescence", loops, len(blocked))
	}
	if slotHolders > 1 {
		h.t.Fatalf("%d static pods hold the slot of %s", slotHolders, rapidFullName)
	}
	mHolder, mHeld := h.model.SlotHolder(rapidFullName)
	switch {
	case n != h.model.Len():
		h.t.Fatalf("the engine has %d records, the model %d", n, h.model.Len())
	case holder != mHolder || held != mHeld:
		h.t.Fatalf("slot holder of %s: engine %q (%v), model %q (%v)", rapidFullName, holder, held, mHolder, mHeld)
	case !slices.Equal(waiting, h.model.Waiting(rapidFullName)):
		h.t.Fatalf("waiting for %s: engine %v, model %v", rapidFullName, waiting, h.model.Waiting(rapidFullName))
	case synced != h.model.Synced():
		h.t.Fatalf("synced: engine %v, model %v", synced, h.model.Synced())
	}

	for _, uid := range rapidUIDs {
		want, known := h.model.Get(uid)
		if e := eng[uid]; e.known != known || e.rec != want {
			h.t.Fatalf("pod %s: the engine's record is %+v (known %v), the model's %+v (known %v)", uid, e.rec, e.known, want, known)
		}
		c := blocked[uid]
		switch {
		case want.Vars.InFlight == fsm.InFlightNone && c != nil:
			h.t.Fatalf("pod %s: %s is blocked but the model has nothing in flight", uid, c.fn)
		case want.Vars.InFlight != fsm.InFlightNone && c == nil:
			h.t.Fatalf("pod %s: the model has %s in flight but no call is blocked", uid, want.Vars.InFlight)
		case c != nil && c.fn != want.Vars.InFlight:
			h.t.Fatalf("pod %s: %s is blocked but the model has %s in flight", uid, c.fn, want.Vars.InFlight)
		}
		if c != nil && c.fn == fsm.InFlightSyncPod {
			if s := want.State; s != fsm.Running && s != fsm.TerminationRequested {
				h.t.Fatalf("pod %s: SyncPod is blocked in state %s", uid, s)
			}
			if IsStatic(c.pod) && (!held || holder != uid) {
				h.t.Fatalf("static pod %s: SyncPod runs but the slot holder is %q (%v)", uid, holder, held)
			}
		}
		if c != nil && c.grace != nil && (*c.grace < 1 || *c.grace != want.Vars.Grace) {
			h.t.Fatalf("pod %s: SyncTerminatingPod runs with grace %d, the record's is %d", uid, *c.grace, want.Vars.Grace)
		}
		kept := len(h.kept[uid]) > 0
		if kept != want.Vars.Waiters {
			h.t.Fatalf("pod %s: the model keeps %d channels but its record has Waiters=%v", uid, len(h.kept[uid]), want.Vars.Waiters)
		}
		if kept && want.State != fsm.TerminationRequested && want.State != fsm.Terminating {
			h.t.Fatalf("pod %s: channels kept in state %s", uid, want.State)
		}
	}

	for _, uid := range append(slices.Clone(rapidUIDs), "ghost") {
		want, known := h.model.Get(uid)
		if got, wantA := answersOf(h.w, uid), rapidAnswers(want, known, h.model.Synced()); got != wantA {
			h.t.Fatalf("pod %s (%s, known %v, synced %v): queries answer %+v, want %+v", uid, want.State, known, h.model.Synced(), got, wantA)
		}
		if s, ok := h.w.State(uid); s != want.State || ok != known {
			h.t.Fatalf("State(%s) = %s, %v; want %s, %v", uid, s, ok, want.State, known)
		}
	}
	for _, name := range []string{rapidFullName, "web_default", "db_default"} {
		want := false
		if uid, ok := h.model.SlotHolder(name); ok {
			r, _ := h.model.Get(uid)
			want = r.State.TerminationRequested() && !r.State.IsTerminated()
		}
		if got := h.w.IsPodForMirrorPodTerminatingByFullName(name); got != want {
			h.t.Fatalf("IsPodForMirrorPodTerminatingByFullName(%s) = %v, want %v", name, got, want)
		}
	}

	for _, c := range h.chans {
		if c.ch != nil {
			if got := rapidIsClosed(c.ch); got != c.closed {
				h.t.Fatalf("channel %d of %s: closed %v, but the model says %v", c.id, c.uid, got, c.closed)
			}
			continue
		}
		k := c.killer
		if k.returned {
			continue
		}
		if c.closed {
			select {
			case err := <-k.result:
				k.returned = true
				if err != nil {
					h.t.Fatalf("KillPod(%s) (ch %d) returned %v, want nil", c.uid, c.id, err)
				}
			case <-time.After(rapidWatchdog):
				h.t.Fatalf("KillPod(%s) (ch %d) has not returned %v after the model released its channel", c.uid, c.id, rapidWatchdog)
			}
			continue
		}
		select {
		case err := <-k.result:
			k.returned = true
			h.t.Fatalf("KillPod(%s) (ch %d) returned %v while the model keeps its channel", c.uid, c.id, err)
		default:
		}
	}
}

func rapidIsClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// rapidAnswers are the query answers a record implies (reference 2.1);
// an unknown UID reads as running before the first SyncKnownPods and as
// gone after it.
func rapidAnswers(r fsm.Record, known, synced bool) answers {
	if !known {
		return answers{couldRun: !synced, finished: synced, containersTerminating: synced, runtimeRemoved: synced, contentRemoved: synced}
	}
	s := r.State
	return answers{
		knownTerminated:       s.IsTerminated(),
		couldRun:              !s.IsTerminated(),
		finished:              s.IsFinished(),
		terminationRequested:  s.TerminationRequested(),
		containersTerminating: s.TerminationStarted(),
		runtimeRemoved:        s.IsTerminated(),
		contentRemoved:        r.Vars.Evicted || (r.Vars.Deleted && s.IsTerminated()),
	}
}

// compareSteps compares, pod by pod, the transitions the engine and the
// model fired since the last comparison.
func (h *rapidHarness) compareSteps(engine []rapidStep) {
	h.t.Helper()
	model := h.steps
	h.steps = nil
	group := func(steps []rapidStep) map[types.UID][]string {
		out := map[types.UID][]string{}
		for _, s := range steps {
			if k, ok := rapidStepKey(s); ok {
				out[s.pod] = append(out[s.pod], k)
			}
		}
		return out
	}
	e, m := group(engine), group(model)
	for _, s := range engine {
		if s.rejected != "" {
			h.t.Fatalf("the engine rejected an event of %s: %s", s.pod, s.rejected)
		}
	}
	pods := maps.Clone(e)
	maps.Copy(pods, m)
	for _, uid := range slices.Sorted(maps.Keys(pods)) {
		if !slices.Equal(e[uid], m[uid]) {
			h.t.Fatalf("pod %s: the engine fired\n\t%s\nthe model\n\t%s", uid, strings.Join(e[uid], "\n\t"), strings.Join(m[uid], "\n\t"))
		}
	}
}

// rapidStepKey describes a step for the comparison. Requeue rows that
// change nothing are skipped (the engine has timers only for records they
// can change), and so are the world facts of events the worker loops fire
// (they depend on how the loops of different pods interleave; the rows do
// not).
func rapidStepKey(s rapidStep) (string, bool) {
	if s.rejected != "" {
		return "rejected " + s.rejected, true
	}
	t := s.t
	if strings.HasSuffix(t.Row, "RequeueIgnored") {
		return "", false
	}
	if !t.Event.External() {
		t.Params.SlotFree, t.Params.FirstInLine = false, false
	}
	return fmt.Sprintf("%s %s->%s row %s effects [%v] vars %+v params %+v batch %d fullName %q",
		t.Event, t.From, t.To, t.Row, t.Effects, t.Vars, t.Params, t.Batch, t.FullName), true
}
