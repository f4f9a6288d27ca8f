package worker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/podlife/podlife/fsm"
)

// This file tests PodWorkers, the goroutine shell around the Core: that it
// never hangs (Stop returns, every KillPod returns, no goroutine of the
// engine survives Stop) and never loses a kill. TestRapid checks the
// lifecycle itself on the Core.

// TestRapidShell is a smaller rapid state machine of the real PodWorkers:
// UpdatePod, KillPod (each in a goroutine of its own, with
// context.Background(), which lets KillPod run the pod's loop on its own
// goroutine, or with a context the test may cancel), SyncKnownPods, timers
// (a fake clock), releasing a sync call blocked in the syncer (success,
// failure, terminal), cancelling a KillPod's context, and Stop before a
// random action (the run goes on after it) or at the end. After every
// action the test waits until every worker loop is blocked in the syncer
// (no sleep: the syncer and the engine signal w.idle) and checks:
//
//   - sync calls for one UID never overlap;
//   - no lost kill: a KillPod returns nil only once its kill was released
//     by the pod's terminating sync succeeding (TerminatingDone), or by the
//     record ending without ever running a container (a static pod that
//     never started, an orphan removed before it ran), or at once because
//     the pod had already terminated; a released KillPod returns nil, a
//     pending one does not return, a cancelled one returns its context's
//     error;
//   - no hang: Stop returns (also a second time); after Stop every pending
//     KillPod returns (ErrStopped, or nil if its kill was released), a new
//     KillPod or UpdatePod returns ErrStopped at once, and no goroutine of
//     the engine remains (goleak, and w.runningLoops is 0);
//   - the shell's invariants (shellInvariants): a record's waiters flag is
//     set exactly while a kept kill is pending, and a timer is armed only
//     for a live record.
//
// A hang fails the run by name after hangDeadline (what is stuck, every
// record, and the last transitions with their effects), not at the test
// binary's -timeout.
func TestRapidShell(t *testing.T) {
	defer rapidFlagDefaults(t)()
	stats := map[string]int{} // what the runs did, over every run
	defer func() {
		var s []string
		for _, k := range slices.Sorted(maps.Keys(stats)) {
			s = append(s, fmt.Sprintf("%s %d", k, stats[k]))
		}
		t.Logf("over every run: %s", strings.Join(s, ", "))
	}()
	rapid.Check(t, func(rt *rapid.T) {
		h := newShellHarness(rt)
		h.stats = stats
		defer h.teardown()
		// Stop comes before the stopAt-th action (the run goes on after
		// it), or at the end of the run.
		stopAt := rapid.IntRange(1, 2*rapidSteps).Draw(rt, "stopAt")
		actions := 0
		act := func(f func(*rapid.T)) func(*rapid.T) {
			return func(t *rapid.T) {
				if actions++; actions == stopAt {
					h.stop()
				}
				f(t)
			}
		}
		rt.Repeat(map[string]func(*rapid.T){
			"":              func(*rapid.T) { h.check() },
			"UpdatePod":     act(h.actUpdatePod),
			"KillPod":       act(h.actKillPod),
			"SyncKnownPods": act(h.actSyncKnownPods),
			"Release":       act(h.actRelease),
			"Release2":      act(h.actRelease),
			"ClockStep":     act(h.actClockStep),
			"CancelKill":    act(h.actCancelKill),
		})
		h.stop()
		h.stop() // Stop twice returns too
		h.finish()
	})
}

var shellUIDs = []types.UID{"n1", "s1", "s2"}

// shellCall is a sync call blocked in the syncer.
type shellCall struct {
	uid      types.UID
	fn       string
	ctx      context.Context
	result   chan shellResult // capacity 1
	released bool             // the test released it (guarded by w.mu)
}

type shellResult struct {
	terminal bool
	err      error
}

// shellKiller is a KillPod call running in a goroutine.
type shellKiller struct {
	id     int
	uid    types.UID
	cancel context.CancelFunc // nil: context.Background()
	result chan error         // capacity 1

	// Guarded by w.mu (the observer sets them).
	fired     bool   // its Kill transition fired
	kept      bool   // the engine kept its channel
	released  string // the row that released it ("" while not)
	cancelled bool
	returned  bool
	err       error
}

type shellHarness struct {
	t      *rapid.T
	w      *PodWorkers
	clock  *clocktesting.FakeClock
	ignore goleak.Option

	// Guarded by w.mu: the syncer and the observer write them.
	blocked  map[types.UID]*shellCall
	overlaps []string
	bad      []string // kills released by a row that may not release them
	expect   *shellKiller
	killers  []*shellKiller
	stopped  bool
	// recent are the last transitions with their effects (the observer's),
	// for a hang report; expired is set when a wait passed hangDeadline.
	recent  []string
	expired bool

	stats map[string]int // the test goroutine only
}

func newShellHarness(t *rapid.T) *shellHarness {
	h := &shellHarness{
		t:       t,
		clock:   clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0)),
		ignore:  goleak.IgnoreCurrent(), // before the engine starts
		blocked: map[types.UID]*shellCall{},
	}
	h.w = New(shellSyncer{h}, Options{Clock: h.clock, ResyncInterval: rapidResync, BackOffPeriod: rapidBackoff, Observer: shellObserver{h}})
	return h
}

// The syncer: every call blocks until the test releases it or its context
// is cancelled (it then returns the context's error).

type shellSyncer struct{ h *shellHarness }

func (s shellSyncer) SyncPod(ctx context.Context, _ UpdateType, pod, _ *v1.Pod, _ *PodStatus) (bool, error) {
	return s.h.block(ctx, pod.UID, "SyncPod")
}

func (s shellSyncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, _ *PodStatus, _ *int64, _ func(*v1.PodStatus)) error {
	_, err := s.h.block(ctx, pod.UID, "SyncTerminatingPod")
	return err
}

func (s shellSyncer) SyncTerminatingRuntimePod(ctx context.Context, rp *RunningPod) error {
	_, err := s.h.block(ctx, rp.ID, "SyncTerminatingRuntimePod")
	return err
}

func (s shellSyncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, _ *PodStatus) error {
	_, err := s.h.block(ctx, pod.UID, "SyncTerminatedPod")
	return err
}

// block registers a call and waits for the test or the context. Both
// changes of the blocked calls happen under w.mu and broadcast w.idle, so a
// quiescence waiter misses neither.
func (h *shellHarness) block(ctx context.Context, uid types.UID, fn string) (bool, error) {
	c := &shellCall{uid: uid, fn: fn, ctx: ctx, result: make(chan shellResult, 1)}
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
	if !released && h.blocked[uid] == c {
		delete(h.blocked, uid)
		h.w.idle.Broadcast()
	}
	h.w.mu.Unlock()
	if released { // released and cancelled at once: the release was first
		r := <-c.result
		return r.terminal, r.err
	}
	return false, ctx.Err()
}

// The observer attributes Kill transitions to KillPod calls and sees which
// row releases a kept kill. The machine calls it with w.mu held.

type shellObserver struct{ h *shellHarness }

func (o shellObserver) Transition(t fsm.Transition) {
	h := o.h
	h.recent = append(h.recent, fmt.Sprintf("%s %s: %s -> %s by %s, effects %s", t.Pod, t.Event, t.From, t.To, t.Row, t.Effects))
	if len(h.recent) > 12 {
		h.recent = h.recent[1:]
	}
	if k := h.expect; k != nil && t.Event == fsm.Kill && t.Pod == k.uid {
		h.expect = nil
		k.fired, k.kept = true, t.Effects.Has(fsm.KeepNotify)
		if !k.kept {
			// Closed at once: the kill cannot be kept because the pod
			// already terminated.
			k.released = t.Row
			if !t.To.IsTerminated() {
				h.bad = append(h.bad, fmt.Sprintf("KillPod %d of %s: row %s did not keep the kill, but the pod is %s", k.id, k.uid, t.Row, t.To))
			}
		}
		h.w.idle.Broadcast()
		return
	}
	if !(t.Effects.Has(fsm.CloseWaiters) || t.Effects.Has(fsm.Exit) || t.To == fsm.Absent) {
		return
	}
	for _, k := range h.killers {
		if k.uid != t.Pod || !k.kept || k.released != "" {
			continue
		}
		k.released = t.Row
		// The pod's terminating sync succeeded, or it never ran a
		// container: a static pod that never started, an orphan removed
		// before it ran.
		ok := t.Event == fsm.TerminatingDone || (t.Event == fsm.Dequeue && t.To == fsm.Finished) || (t.Event == fsm.SyncKnownPods && t.To == fsm.Absent)
		if !ok {
			h.bad = append(h.bad, fmt.Sprintf("KillPod %d of %s released by row %s", k.id, k.uid, t.Row))
		}
	}
}

func (o shellObserver) Rejected(uid types.UID, s fsm.State, ev fsm.Event, err error) {
	o.h.bad = append(o.h.bad, fmt.Sprintf("rejected %s of %s in %s: %v", ev, uid, s, err))
}

// waitFor waits on w.idle until cond holds (checked with w.mu held); past
// hangDeadline it fails the run, naming what it waited for.
func (h *shellHarness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	h.w.mu.Lock()
	h.expired = false
	timer := time.AfterFunc(hangDeadline, func() {
		h.w.mu.Lock()
		h.expired = true
		h.w.idle.Broadcast()
		h.w.mu.Unlock()
	})
	for !cond() && !h.expired {
		h.w.idle.Wait()
	}
	timer.Stop()
	report := ""
	if !cond() {
		report = h.reportLocked()
	}
	h.w.mu.Unlock()
	if report != "" {
		h.t.Fatalf("hang: %s did not happen within %v\n%s", what, hangDeadline, report)
	}
}

// reportLocked describes, with w.mu held, the engine, the blocked sync
// calls, the pending KillPods and the last transitions.
func (h *shellHarness) reportLocked() string {
	var b strings.Builder
	b.WriteString(h.w.describeLocked())
	for _, uid := range slices.Sorted(maps.Keys(h.blocked)) {
		c := h.blocked[uid]
		fmt.Fprintf(&b, "  blocked: %s/%s (context done %v)\n", uid, c.fn, c.ctx.Err() != nil)
	}
	for _, k := range h.killers {
		if !k.returned {
			fmt.Fprintf(&b, "  KillPod %d of %s pending: kept %v, released by %q, cancelled %v\n", k.id, k.uid, k.kept, k.released, k.cancelled)
		}
	}
	b.WriteString("  last transitions:\n")
	for _, r := range h.recent {
		b.WriteString("    " + r + "\n")
	}
	return b.String()
}

// shellInvariants checks, with w.mu held after quiescence and before Stop,
// what the shell holds against the records: a record's waiters flag is set
// exactly while a KillPod whose kill it kept is pending (E1), and a timer
// is armed only for a live record (E3).
func (h *shellHarness) shellInvariantsLocked() []string {
	var bad []string
	for _, uid := range shellUIDs {
		r, known := h.w.core.Record(uid)
		pending := slices.ContainsFunc(h.killers, func(k *shellKiller) bool { return k.uid == uid && k.kept && k.released == "" })
		if r.Vars.Waiters != pending {
			bad = append(bad, fmt.Sprintf("WaitersAreOpenChannels: pod %s (%s) has waiters %v, but a kept KillPod is pending: %v", uid, r.State, r.Vars.Waiters, pending))
		}
		if _, armed := h.w.timers.byUID[uid]; armed && !(known && !r.State.IsFinished()) {
			bad = append(bad, fmt.Sprintf("TimerOnlyWhileLive: pod %s (%s, record %v) has a timer armed", uid, r.State, known))
		}
	}
	return bad
}

// quiesce waits until every worker loop is blocked in the syncer (a
// blocked call whose context is done is about to return).
func (h *shellHarness) quiesce() {
	h.t.Helper()
	h.waitFor("quiescence (every worker loop blocked in the syncer)", func() bool {
		live := 0
		for _, c := range h.blocked {
			if c.ctx.Err() == nil {
				live++
			}
		}
		return h.w.runningLoops == live
	})
}

// check runs after every action: quiescence, then the kills.
func (h *shellHarness) check() {
	h.t.Helper()
	h.quiesce()
	h.w.mu.Lock()
	overlaps, bad := slices.Clone(h.overlaps), slices.Clone(h.bad)
	killers := slices.Clone(h.killers)
	if !h.stopped {
		if inv := h.shellInvariantsLocked(); len(inv) > 0 {
			bad = append(bad, inv...)
			bad = append(bad, "\n"+h.reportLocked())
		}
	}
	h.w.mu.Unlock()
	if len(overlaps) > 0 {
		h.t.Fatalf("sync calls overlapped: %s", strings.Join(overlaps, "; "))
	}
	if len(bad) > 0 {
		h.t.Fatalf("%s", strings.Join(bad, "; "))
	}
	for _, k := range killers {
		h.checkKiller(k)
	}
}

// checkKiller checks one KillPod call; it waits for the calls that must
// return.
func (h *shellHarness) checkKiller(k *shellKiller) {
	h.t.Helper()
	h.w.mu.Lock()
	released, cancelled, stopped, returned := k.released, k.cancelled, h.stopped, k.returned
	h.w.mu.Unlock()
	if returned {
		return
	}
	mustReturn := released != "" || cancelled || stopped
	var err error
	if mustReturn {
		select {
		case err = <-k.result:
		case <-time.After(hangDeadline): // a lost kill
			h.w.mu.Lock()
			report := h.reportLocked()
			h.w.mu.Unlock()
			h.t.Fatalf("hang: KillPod %d of %s (released by %q, cancelled %v, stopped %v) has not returned after %v\n%s",
				k.id, k.uid, released, cancelled, stopped, hangDeadline, report)
		}
	} else {
		select {
		case err = <-k.result:
			h.t.Fatalf("KillPod %d of %s returned %v, but its kill is pending", k.id, k.uid, err)
		default:
			return
		}
	}
	h.w.mu.Lock()
	k.returned, k.err = true, err
	h.w.mu.Unlock()
	switch {
	case err == nil && released == "":
		h.t.Fatalf("KillPod %d of %s returned nil, but its kill was never released", k.id, k.uid)
	case err != nil && released != "" && !cancelled && !stopped:
		h.t.Fatalf("KillPod %d of %s returned %v, but row %s released its kill", k.id, k.uid, err, released)
	case err != nil && !errors.Is(err, ErrStopped) && !errors.Is(err, context.Canceled):
		h.t.Fatalf("KillPod %d of %s returned %v, want nil, ErrStopped or context.Canceled", k.id, k.uid, err)
	case err != nil && errors.Is(err, ErrStopped) && !stopped:
		h.t.Fatalf("KillPod %d of %s returned %v before Stop", k.id, k.uid, err)
	case err != nil && errors.Is(err, context.Canceled) && !cancelled:
		h.t.Fatalf("KillPod %d of %s returned %v, but its context was not cancelled", k.id, k.uid, err)
	}
	h.t.Logf("KillPod %d of %s returned %v (released by %q)", k.id, k.uid, err, released)
	switch {
	case err == nil:
		h.stats["KillPod nil ("+released+")"]++
	case errors.Is(err, ErrStopped):
		h.stats["KillPod ErrStopped"]++
	default:
		h.stats["KillPod canceled"]++
	}
}

// drawShellPod draws a pod: maybe deleted, maybe terminal.
func drawShellPod(t *rapid.T, uid types.UID) *v1.Pod {
	p := plainPod(uid)
	if rapid.IntRange(0, 4).Draw(t, "deleting") == 4 {
		ts := metav1.NewTime(time.Unix(1_700_000_000, 0))
		p.DeletionTimestamp = &ts
		p.DeletionGracePeriodSeconds = int64p(rapid.Int64Range(0, 3).Draw(t, "deletionGrace"))
	}
	if rapid.IntRange(0, 6).Draw(t, "terminal") == 6 {
		p.Status.Phase = v1.PodSucceeded
	}
	return p
}

func (h *shellHarness) isStopped() bool {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	return h.stopped
}

func (h *shellHarness) actUpdatePod(t *rapid.T) {
	uid := rapid.SampledFrom(shellUIDs).Draw(t, "pod")
	typ := rapid.SampledFrom(rapidUpdateTypes).Draw(t, "type")
	o := UpdatePodOptions{UpdateType: typ, Pod: drawShellPod(t, uid)}
	t.Logf("UpdatePod(%s %s)", typ, uid)
	err := h.w.UpdatePod(o)
	switch stopped := h.isStopped(); {
	case stopped && !errors.Is(err, ErrStopped):
		t.Fatalf("UpdatePod after Stop returned %v, want ErrStopped", err)
	case !stopped && err != nil:
		t.Fatalf("UpdatePod: %v", err)
	}
}

func (h *shellHarness) actKillPod(t *rapid.T) {
	uid := rapid.SampledFrom(shellUIDs).Draw(t, "pod")
	pod := drawShellPod(t, uid)
	background := rapid.Bool().Draw(t, "background")
	var grace *int64
	if rapid.Bool().Draw(t, "hasGrace") {
		grace = int64p(rapid.Int64Range(0, 3).Draw(t, "grace"))
	}
	k := &shellKiller{id: len(h.killers) + 1, uid: uid, result: make(chan error, 1)}
	ctx := context.Background()
	if !background {
		ctx, k.cancel = context.WithCancel(ctx)
	}
	t.Logf("KillPod %d of %s (background %v)", k.id, uid, background)
	h.w.mu.Lock()
	h.killers = append(h.killers, k)
	h.expect = k
	stopped := h.stopped
	h.w.mu.Unlock()
	go func() { k.result <- h.w.KillPod(ctx, pod, false, grace, nil) }()
	if stopped {
		// Nothing fires after Stop: KillPod returns ErrStopped at once.
		err := <-k.result
		h.w.mu.Lock()
		k.returned, k.err, h.expect = true, err, nil
		h.w.mu.Unlock()
		if !errors.Is(err, ErrStopped) {
			t.Fatalf("KillPod after Stop returned %v, want ErrStopped", err)
		}
		return
	}
	h.waitFor(fmt.Sprintf("the Kill of KillPod %d of %s", k.id, uid), func() bool { return k.fired })
}

func (h *shellHarness) actSyncKnownPods(t *rapid.T) {
	var desired []*v1.Pod
	var names []string
	for _, uid := range shellUIDs {
		if rapid.Bool().Draw(t, "desired "+string(uid)) {
			desired = append(desired, plainPod(uid))
			names = append(names, string(uid))
		}
	}
	t.Logf("SyncKnownPods(%v)", names)
	h.w.SyncKnownPods(desired)
}

func (h *shellHarness) actRelease(t *rapid.T) {
	h.quiesce()
	h.w.mu.Lock()
	var uids []types.UID
	for _, uid := range slices.Sorted(maps.Keys(h.blocked)) {
		if h.blocked[uid].ctx.Err() == nil {
			uids = append(uids, uid)
		}
	}
	h.w.mu.Unlock()
	if len(uids) == 0 {
		t.Skip("no call is blocked")
	}
	uid := rapid.SampledFrom(uids).Draw(t, "call")
	outcome := rapid.SampledFrom([]string{"success", "success", "error", "terminal"}).Draw(t, "outcome")
	h.w.mu.Lock()
	c := h.blocked[uid]
	c.released = true
	delete(h.blocked, uid)
	r := shellResult{terminal: outcome == "terminal"}
	if outcome == "error" {
		r.err = errRapidSync
	}
	c.result <- r
	h.w.mu.Unlock()
	t.Logf("release %s/%s: %s", uid, c.fn, outcome)
	h.stats["released "+c.fn]++
}

func (h *shellHarness) actClockStep(t *rapid.T) {
	t.Logf("clock step")
	h.clock.Step(3 * max(rapidResync, rapidBackoff))
	h.w.fireDue() // the timer goroutine may get there first; either fires each timer once
}

func (h *shellHarness) actCancelKill(t *rapid.T) {
	h.w.mu.Lock()
	var ks []*shellKiller
	for _, k := range h.killers {
		if k.cancel != nil && !k.cancelled && !k.returned {
			ks = append(ks, k)
		}
	}
	h.w.mu.Unlock()
	if len(ks) == 0 {
		t.Skip("no KillPod with a cancellable context is pending")
	}
	k := rapid.SampledFrom(ks).Draw(t, "kill")
	t.Logf("cancel KillPod %d of %s", k.id, k.uid)
	h.w.mu.Lock()
	k.cancelled = true
	h.w.mu.Unlock()
	k.cancel()
}

// stop calls Stop: it must return, and then every pending KillPod.
func (h *shellHarness) stop() {
	h.t.Helper()
	h.t.Logf("Stop")
	h.w.mu.Lock()
	if !h.stopped {
		h.stats["runs"]++
		h.stats["blocked calls at Stop"] += len(h.blocked)
	}
	h.w.mu.Unlock()
	within(h.t, "Stop", h.w, h.w.Stop)
	h.w.mu.Lock()
	h.stopped = true
	loops := h.w.runningLoops
	h.w.mu.Unlock()
	if loops != 0 {
		h.t.Fatalf("Stop returned with %d worker loops running", loops)
	}
	select {
	case <-h.w.done:
	default:
		h.t.Fatalf("Stop returned before the timer goroutine ended")
	}
	h.check()
}

// finish checks that no goroutine of the engine (or of a KillPod) is left.
func (h *shellHarness) finish() {
	for _, k := range h.killers {
		if !k.returned {
			h.t.Fatalf("KillPod %d of %s has not returned after Stop", k.id, k.uid)
		}
	}
	if err := goleak.Find(h.ignore); err != nil {
		h.t.Fatalf("goroutines left after Stop: %v", err)
	}
}

// teardown ends a failed run: it stops the engine (giving up after
// hangDeadline: the run failed already) and the KillPod calls.
func (h *shellHarness) teardown() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.w.Stop()
	}()
	select {
	case <-done:
	case <-time.After(hangDeadline):
	}
	for _, k := range h.killers {
		if k.cancel != nil {
			k.cancel()
		}
	}
}

// stopSyncer is a PodSyncer for the Stop stress test; every call does what
// mode says.
type stopSyncer struct {
	mode   string // "return", "fail", "block" (until the context is cancelled)
	active atomic.Int64
}

func (s *stopSyncer) do(ctx context.Context) error {
	s.active.Add(1)
	defer s.active.Add(-1)
	switch s.mode {
	case "fail":
		return errRapidSync
	case "block":
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (s *stopSyncer) SyncPod(ctx context.Context, _ UpdateType, _, _ *v1.Pod, _ *PodStatus) (bool, error) {
	return false, s.do(ctx)
}
func (s *stopSyncer) SyncTerminatingPod(ctx context.Context, _ *v1.Pod, _ *PodStatus, _ *int64, _ func(*v1.PodStatus)) error {
	return s.do(ctx)
}
func (s *stopSyncer) SyncTerminatingRuntimePod(ctx context.Context, _ *RunningPod) error {
	return s.do(ctx)
}
func (s *stopSyncer) SyncTerminatedPod(ctx context.Context, _ *v1.Pod, _ *PodStatus) error {
	return s.do(ctx)
}

// TestStopAfterCreate is a stress test of Stop: New, one create (and, in
// some cases, a KillPod), Stop, 2000 times per case, with the syncer
// returning at once, failing (a back-off timer is armed) or blocking until
// its context is cancelled, and Stop either at once or after the caller
// yielded. Stop must return in every interleaving, with no worker loop
// left, the timer goroutine ended and no sync call in progress; a KillPod
// running when Stop is called must return (nil, or an error wrapping
// ErrStopped). Run it with -cpu 1,2,4 for more interleavings. A hang fails
// the iteration by name after hangDeadline, with every record the engine
// holds.
func TestStopAfterCreate(t *testing.T) {
	const iterations = 2000
	cases := []struct {
		name  string
		mode  string
		kill  bool // also KillPod(context.Background()), which runs the loop inline
		yield bool // the caller yields before Stop
	}{
		{"sync returns", "return", false, false},
		{"sync returns, yield", "return", false, true},
		{"sync fails", "fail", false, true},
		{"sync blocks", "block", false, false},
		{"sync blocks, yield", "block", false, true},
		{"sync blocks, KillPod", "block", true, true},
		{"sync returns, KillPod", "return", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			pod := newPod("a", "web", false)
			for i := range iterations {
				s := &stopSyncer{mode: c.mode}
				w := New(s, Options{})
				if err := w.UpdatePod(createOp(pod)); err != nil {
					t.Fatal(err)
				}
				killed := make(chan error, 1)
				if c.kill {
					go func() { killed <- w.KillPod(context.Background(), pod, false, nil, nil) }()
				}
				if c.yield {
					runtime.Gosched()
				}
				within(t, fmt.Sprintf("iteration %d: Stop", i), w, w.Stop)
				w.mu.Lock()
				loops := w.runningLoops
				w.mu.Unlock()
				if loops != 0 || !isClosed(w.done) || s.active.Load() != 0 {
					t.Fatalf("iteration %d: after Stop, %d loops run, timer goroutine ended %v, %d sync calls in progress", i, loops, isClosed(w.done), s.active.Load())
				}
				if c.kill {
					if err := receiveWithin(t, fmt.Sprintf("iteration %d: KillPod's return after Stop", i), w, killed); err != nil && !errors.Is(err, ErrStopped) {
						t.Fatalf("iteration %d: KillPod returned %v, want nil or ErrStopped", i, err)
					}
				}
			}
			goleak.VerifyNone(t, ignore)
		})
	}
}

// TestKillPodNilContext: a nil context is invalid input: KillPod returns an
// error wrapping ErrInvalidUpdate, does not panic, and changes nothing.
func TestKillPodNilContext(t *testing.T) {
	for _, c := range []struct {
		name string
		pod  *v1.Pod
	}{
		{"pod", newPod("a", "web", false)},
		{"no pod", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Options{})
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("KillPod with a nil context panicked: %v", r)
					}
				}()
				//lint:ignore SA1012 a nil context is the input under test
				err = e.w.KillPod(nil, c.pod, false, nil, nil)
			}()
			if !errors.Is(err, ErrInvalidUpdate) {
				t.Fatalf("KillPod(nil ctx) returned %v, want an error wrapping ErrInvalidUpdate", err)
			}
			e.settle()
			e.wantState("a", fsm.Absent)
			e.wantFns("a")
		})
	}
}

// TestKillPodReturnsAfterStop: a KillPod waiting for its pod when Stop is
// called returns an error wrapping ErrStopped, whether its caller's
// goroutine runs the pod's loop (context.Background()) or a worker
// goroutine does; a KillPod after Stop returns ErrStopped at once.
func TestKillPodReturnsAfterStop(t *testing.T) {
	for _, c := range []struct {
		name       string
		background bool
		running    bool // the pod ran first (a SyncPod succeeded)
	}{
		{"background context, first sight", true, false},
		{"background context, running pod", true, true},
		{"cancellable context, first sight", false, false},
		{"cancellable context, running pod", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Options{})
			pod := newPod("a", "web", false)
			if c.running {
				e.update(createOp(pod))
			}
			g := e.hold("a", "SyncTerminatingPod", outcome{}) // never released: Stop cancels it
			ctx := context.Background()
			if !c.background {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
			}
			res := make(chan error, 1)
			go func() { res <- e.w.KillPod(ctx, pod, false, nil, nil) }()
			g.wait()
			e.w.Stop()
			if err := <-res; !errors.Is(err, ErrStopped) {
				t.Fatalf("KillPod returned %v after Stop, want ErrStopped", err)
			}
			if err := e.w.KillPod(ctx, pod, false, nil, nil); !errors.Is(err, ErrStopped) {
				t.Fatalf("KillPod after Stop returned %v, want ErrStopped", err)
			}
			if c := e.syncer.calls("a"); len(c) == 0 || !errors.Is(c[len(c)-1].err, context.Canceled) {
				t.Fatalf("the blocked SyncTerminatingPod returned %+v, want its context cancelled", c)
			}
		})
	}
}

// TestKillPodRunsTheLoopInline: a KillPod whose context cannot end and
// whose kill starts the pod's worker loop runs the terminating sync on its
// caller's goroutine (documented on KillPod), and hands the cleanup to a
// goroutine of the engine; with a context that can end, or when the pod's
// loop already runs, a goroutine of the engine runs the terminating sync.
func TestKillPodRunsTheLoopInline(t *testing.T) {
	for _, c := range []struct {
		name        string
		cancellable bool
		busy        bool // a SyncPod of the pod runs when the kill comes
		inline      bool
	}{
		{"background context, idle pod", false, false, true},
		{"cancellable context, idle pod", true, false, false},
		{"background context, busy pod", false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Options{})
			pod := newPod("a", "web", false)
			var syncing *gate
			if c.busy {
				syncing = e.hold("a", "SyncPod", outcome{})
				e.send(createOp(pod))
				syncing.wait()
			} else {
				e.update(createOp(pod))
			}
			ctx := context.Background()
			if c.cancellable {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
			}
			terminating := e.syncer.pauseNext("a")
			resumeTerminating := sync.OnceFunc(func() { close(terminating.resume) })
			defer resumeTerminating() // a failed check must not leave Stop waiting for the call
			res := make(chan error, 1)
			go func() { res <- e.w.KillPod(ctx, pod, false, nil, nil) }()
			<-terminating.entered // a busy pod's SyncPod returned: the kill cancelled it
			stack := stackOf(t, "(*fakeSyncer).SyncTerminatingPod(")
			if onCaller := strings.Contains(stack, "(*PodWorkers).KillPod("); onCaller != c.inline {
				t.Fatalf("SyncTerminatingPod ran on the KillPod caller's goroutine: %v, want %v:\n%s", onCaller, c.inline, stack)
			}
			cleanup := e.syncer.pauseNext("a")
			resumeCleanup := sync.OnceFunc(func() { close(cleanup.resume) })
			defer resumeCleanup()
			resumeTerminating()
			<-cleanup.entered
			if stack := stackOf(t, "(*fakeSyncer).SyncTerminatedPod("); strings.Contains(stack, "(*PodWorkers).KillPod(") {
				t.Fatalf("the cleanup ran on the KillPod caller's goroutine:\n%s", stack)
			}
			resumeCleanup()
			if err := <-res; err != nil {
				t.Fatalf("KillPod: %v", err)
			}
			e.settle()
			e.wantState("a", fsm.Finished)
			e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
		})
	}
}

// stackOf returns the stack of the goroutine whose stack shows frame.
func stackOf(t *testing.T, frame string) string {
	t.Helper()
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, frame) {
			return g
		}
	}
	t.Fatalf("no goroutine shows %s", frame)
	return ""
}

// TestStopWhileAKillIsReleased: the kill's terminating sync ignores its
// context and succeeds once Stop began (and cancelled it); the KillPod
// caller runs the pod's loop (context.Background()). Stop returns, and
// KillPod returns nil or ErrStopped.
func TestStopWhileAKillIsReleased(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	pz := e.syncer.pauseNext("a") // the call ignores its context until resumed
	res := make(chan error, 1)
	go func() { res <- e.w.KillPod(context.Background(), pod, false, nil, nil) }()
	<-pz.entered
	stopped := make(chan struct{})
	go func() {
		e.w.Stop()
		close(stopped)
	}()
	<-e.w.stopCh // Stop began
	close(pz.resume)
	<-stopped
	if err := <-res; err != nil && !errors.Is(err, ErrStopped) {
		t.Fatalf("KillPod returned %v, want nil or ErrStopped", err)
	}
	e.wantFns("a", "SyncTerminatingPod")
}
