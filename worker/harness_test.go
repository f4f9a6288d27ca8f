package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/fsm"
)

// The engine tests' one harness: env is a running PodWorkers on a fake
// clock whose PodSyncer is a fakeSyncer. The fake plays scripted outcomes,
// records every call (as it starts and as it returns, with what it received
// and returned), reports when a call begins (so a test can wait for a
// blocked call without polling), can hold or panic a call, and notes calls
// for one UID that overlap.

// syncCall is one sync call the fake syncer saw.
type syncCall struct {
	fn         string // SyncPod, SyncTerminatingPod, SyncTerminatingRuntimePod, SyncTerminatedPod
	uid        types.UID
	updateType UpdateType
	version    string // the pod's ResourceVersion
	mirror     string // the mirror pod's name, "" when none
	grace      int64  // SyncTerminatingPod: the grace period, -1 when nil
	reason     string // SyncTerminatingPod: Reason written by the status function
	status     *PodStatus
	err        error // what the call returned (returned calls only)
	ctxDone    bool  // the call's context was done when it returned
}

// outcome scripts one sync call's result.
type outcome struct {
	terminal bool
	err      error
	block    chan struct{} // when set, the call waits for it (or its ctx)
}

var errSync = errors.New("injected sync error")

type syncKey struct {
	uid types.UID
	fn  string
}

// fakeSyncer is the PodSyncer of an env; by default every call succeeds.
type fakeSyncer struct {
	mu      sync.Mutex
	scripts map[syncKey][]outcome
	// started lists every call as it starts, after a pause; returned lists
	// every call that returned, with its result.
	started, returned []syncCall
	// events lists "begin uid/fn" and "end uid/fn" in order; a call begins
	// before a pause holds it.
	events    []string
	running   map[types.UID]string // the call in progress for each UID
	inFlight  int                  // calls in progress, all UIDs
	maxFlight int
	overlaps  []string
	waits     map[syncKey][]chan struct{}
	panics    map[syncKey]int
	pauses    map[types.UID]*pause
}

func newFakeSyncer() *fakeSyncer {
	return &fakeSyncer{scripts: map[syncKey][]outcome{}, running: map[types.UID]string{},
		waits: map[syncKey][]chan struct{}{}, panics: map[syncKey]int{}, pauses: map[types.UID]*pause{}}
}

// script queues outcomes for the next calls of fn for uid.
func (s *fakeSyncer) script(uid types.UID, fn string, outs ...outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := syncKey{uid, fn}
	s.scripts[k] = append(s.scripts[k], outs...)
}

// entered returns a channel closed when the next call of fn for uid begins.
func (s *fakeSyncer) entered(uid types.UID, fn string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	k := syncKey{uid, fn}
	s.waits[k] = append(s.waits[k], ch)
	return ch
}

// panicNext makes the next n calls of fn for uid panic once they started
// (after their scripted outcome played).
func (s *fakeSyncer) panicNext(uid types.UID, fn string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.panics[syncKey{uid, fn}] += n
}

// pause holds the next call for one UID, whatever its function, before it
// starts; the call then goes on when resumed, even if its context was
// cancelled (a syncer may ignore its context).
type pause struct {
	entered chan struct{}
	resume  chan struct{}
}

// pauseNext pauses the next call for uid.
func (s *fakeSyncer) pauseNext(uid types.UID) *pause {
	s.mu.Lock()
	defer s.mu.Unlock()
	pz := &pause{entered: make(chan struct{}), resume: make(chan struct{})}
	s.pauses[uid] = pz
	return pz
}

// unpause withdraws a pause no call took.
func (s *fakeSyncer) unpause(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pauses, uid)
}

// do makes one call: it begins (and is held if paused), starts (plays its
// scripted outcome), may panic, and returns.
func (s *fakeSyncer) do(ctx context.Context, c syncCall) (terminal bool, err error) {
	if pz := s.begin(c.uid, c.fn); pz != nil {
		close(pz.entered)
		<-pz.resume
	}
	defer func() { s.end(ctx, c, err) }()
	terminal, err = s.play(ctx, c)
	s.maybePanic(c.uid, c.fn)
	return terminal, err
}

func (s *fakeSyncer) begin(uid types.UID, fn string) *pause {
	s.mu.Lock()
	defer s.mu.Unlock()
	pz := s.pauses[uid]
	delete(s.pauses, uid)
	if cur := s.running[uid]; cur != "" {
		s.overlaps = append(s.overlaps, fmt.Sprintf("pod %s: %s began while %s was running", uid, fn, cur))
	}
	s.running[uid] = fn
	s.events = append(s.events, "begin "+string(uid)+"/"+fn)
	s.inFlight++
	s.maxFlight = max(s.maxFlight, s.inFlight)
	k := syncKey{uid, fn}
	if q := s.waits[k]; len(q) > 0 {
		close(q[0])
		s.waits[k] = q[1:]
	}
	return pz
}

// play records that the call started and returns its scripted outcome,
// waiting first for a blocked one.
func (s *fakeSyncer) play(ctx context.Context, c syncCall) (bool, error) {
	s.mu.Lock()
	s.started = append(s.started, c)
	k := syncKey{c.uid, c.fn}
	var out outcome
	if q := s.scripts[k]; len(q) > 0 {
		out, s.scripts[k] = q[0], q[1:]
	}
	s.mu.Unlock()
	if out.block != nil {
		select {
		case <-out.block:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	return out.terminal, out.err
}

func (s *fakeSyncer) maybePanic(uid types.UID, fn string) {
	s.mu.Lock()
	k := syncKey{uid, fn}
	n := s.panics[k]
	if n > 0 {
		s.panics[k] = n - 1
	}
	s.mu.Unlock()
	if n > 0 {
		panic(fmt.Sprintf("injected panic in %s", fn))
	}
}

func (s *fakeSyncer) end(ctx context.Context, c syncCall, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, c.uid)
	s.events = append(s.events, "end "+string(c.uid)+"/"+c.fn)
	s.inFlight--
	c.err, c.ctxDone = err, ctx.Err() != nil
	s.returned = append(s.returned, c)
}

func (s *fakeSyncer) SyncPod(ctx context.Context, t UpdateType, pod, mirror *v1.Pod, st *PodStatus) (bool, error) {
	c := syncCall{fn: "SyncPod", uid: pod.UID, updateType: t, version: pod.ResourceVersion, grace: -1, status: st}
	if mirror != nil {
		c.mirror = mirror.Name
	}
	return s.do(ctx, c)
}

func (s *fakeSyncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, st *PodStatus, grace *int64, fn func(*v1.PodStatus)) error {
	c := syncCall{fn: "SyncTerminatingPod", uid: pod.UID, version: pod.ResourceVersion, grace: -1, status: st}
	if grace != nil {
		c.grace = *grace
	}
	if fn != nil {
		var status v1.PodStatus
		fn(&status)
		c.reason = status.Reason
	}
	_, err := s.do(ctx, c)
	return err
}

func (s *fakeSyncer) SyncTerminatingRuntimePod(ctx context.Context, rp *RunningPod) error {
	_, err := s.do(ctx, syncCall{fn: "SyncTerminatingRuntimePod", uid: rp.ID, grace: -1})
	return err
}

func (s *fakeSyncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, st *PodStatus) error {
	_, err := s.do(ctx, syncCall{fn: "SyncTerminatedPod", uid: pod.UID, version: pod.ResourceVersion, grace: -1, status: st})
	return err
}

// fns lists the functions of the calls for uid that started, in order.
func (s *fakeSyncer) fns(uid types.UID) []string {
	var out []string
	for _, c := range s.of(&s.started, uid) {
		out = append(out, c.fn)
	}
	return out
}

// last is the latest call for uid that started.
func (s *fakeSyncer) last(uid types.UID) syncCall {
	if cs := s.of(&s.started, uid); len(cs) > 0 {
		return cs[len(cs)-1]
	}
	return syncCall{}
}

// calls lists the calls for uid that returned, in order.
func (s *fakeSyncer) calls(uid types.UID) []syncCall { return s.of(&s.returned, uid) }

// of lists the calls for uid in *list (started or returned), in order.
func (s *fakeSyncer) of(list *[]syncCall, uid types.UID) []syncCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []syncCall
	for _, c := range *list {
		if c.uid == uid {
			out = append(out, c)
		}
	}
	return out
}

// begun counts the calls for uid that began, held ones included.
func (s *fakeSyncer) begun(uid types.UID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ev := range s.events {
		if strings.HasPrefix(ev, "begin "+string(uid)+"/") {
			n++
		}
	}
	return n
}

// seenOrder lists the beginnings and ends of every call, in order.
func (s *fakeSyncer) seenOrder() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// env is a PodWorkers under test with a fake clock and a fakeSyncer.
type env struct {
	t      *testing.T
	w      *PodWorkers
	syncer *fakeSyncer
	clock  *clocktesting.FakeClock
}

// start returns a running engine on a fake clock. At cleanup it stops the
// engine, fails the test if calls for one UID ever overlapped, and checks
// that no goroutine leaked.
func start(t *testing.T, opts Options) *env {
	t.Helper()
	ignore := goleak.IgnoreCurrent() // before the engine starts: its goroutines must be gone at the end
	e := &env{t: t, syncer: newFakeSyncer(), clock: clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0))}
	opts.Clock = e.clock
	opts.CheckedFSM = true // every state change through looplab's Event
	e.w = New(e.syncer, opts)
	t.Cleanup(func() {
		within(t, "Stop at the test's end", e.w, e.w.Stop)
		e.syncer.mu.Lock()
		overlaps := e.syncer.overlaps
		e.syncer.mu.Unlock()
		for _, o := range overlaps {
			t.Errorf("overlapping sync calls: %s", o)
		}
		goleak.VerifyNone(t, ignore)
	})
	return e
}

// waitIdle blocks until no worker loop runs (w.runningLoops is 0): every
// update given so far was taken and every sync call it caused returned.
func (w *PodWorkers) waitIdle() {
	w.mu.Lock()
	for w.runningLoops > 0 {
		w.idle.Wait()
	}
	w.mu.Unlock()
}

// settle waits until no worker loop runs (nothing in flight except calls
// blocked by the test); a loop that never ends fails the test by name
// (hangDeadline).
func (e *env) settle() {
	e.t.Helper()
	within(e.t, "settle (every worker loop ended)", e.w, e.w.waitIdle)
}

func (e *env) backoff() time.Duration { return e.w.core.backoff }
func (e *env) resync() time.Duration  { return e.w.core.resync }

// advance moves the fake clock, fires due timers and settles.
func (e *env) advance(d time.Duration) {
	e.step(d)
	e.settle()
}

// step moves the fake clock and fires due timers without waiting for the
// workers (use it while a call is blocked; advance settles).
func (e *env) step(d time.Duration) {
	e.clock.Step(d)
	e.w.fireDue()
}

// update delivers an update and settles.
func (e *env) update(o UpdatePodOptions) {
	e.t.Helper()
	e.send(o)
	e.settle()
}

// send delivers an update without waiting for the worker.
func (e *env) send(o UpdatePodOptions) {
	e.t.Helper()
	if err := e.w.UpdatePod(o); err != nil {
		e.t.Fatalf("UpdatePod: %v", err)
	}
}

// locked runs f with the engine's lock held: every call f makes on the Core
// happens before any worker loop can take the next update, which is how the
// tests reproduce updates that arrive before a worker goroutine gets to run.
// Then, as every PodWorkers method does, it carries out the effects the
// Core recorded: loops and timers under the lock, channels and
// cancellations after it.
func (e *env) locked(f func(c *Core)) {
	e.w.mu.Lock()
	f(e.w.core)
	later, _ := e.w.settle(nil, "")
	e.w.mu.Unlock()
	finish(later)
}

// coreUpdate is UpdatePod on the Core, for use inside locked.
func (e *env) coreUpdate(c *Core, o UpdatePodOptions) {
	e.t.Helper()
	if err := e.w.updatePod(o, e.w.input(&o)); err != nil { // the shell's waiter registry, under mu
		e.t.Fatalf("Core.UpdatePod: %v", err)
	}
}

// gate is a scripted call that blocks until released or cancelled.
type gate struct {
	entered <-chan struct{}
	ch      chan struct{}
	once    sync.Once
	// what names the call, t and w report a call that never begins.
	what string
	t    *testing.T
	w    *PodWorkers
}

func (g *gate) release() { g.once.Do(func() { close(g.ch) }) }

// wait blocks until the gate's call began (failing the test by name after
// hangDeadline).
func (g *gate) wait() {
	g.t.Helper()
	receiveWithin(g.t, "the start of "+g.what, g.w, g.entered)
}

// hold scripts the next call of fn for uid to block, then to return out's
// result. It must be the only outcome scripted for (uid, fn) at that time.
func (e *env) hold(uid types.UID, fn string, out outcome) *gate {
	g := &gate{ch: make(chan struct{}), what: fn + " of " + string(uid), t: e.t, w: e.w}
	out.block = g.ch
	g.entered = e.syncer.entered(uid, fn)
	e.syncer.script(uid, fn, out)
	return g
}

func (e *env) wantState(uid types.UID, want fsm.State) {
	e.t.Helper()
	if got, _ := e.w.State(uid); got != want {
		e.t.Fatalf("pod %s is %s, want %s", uid, got, want)
	}
}

func (e *env) wantFns(uid types.UID, want ...string) {
	e.t.Helper()
	if got := e.syncer.fns(uid); !slices.Equal(got, want) {
		e.t.Fatalf("pod %s: calls %v, want %v", uid, got, want)
	}
}

func (e *env) wantGraces(uid types.UID, want ...int64) {
	e.t.Helper()
	var got []int64
	for _, s := range e.syncer.calls(uid) {
		if s.fn == "SyncTerminatingPod" {
			got = append(got, s.grace)
		}
	}
	if !slices.Equal(got, want) {
		e.t.Fatalf("pod %s: SyncTerminatingPod grace periods %v, want %v", uid, got, want)
	}
}
