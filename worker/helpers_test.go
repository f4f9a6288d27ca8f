package worker

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/fsm"
)

// This file extends the harness (harness_test.go) for the suite: a probe
// around the recording syncer that reports when a call begins (so a test can
// wait for a blocked call without polling), records what each call received
// and returned, checks that calls for one UID never overlap, and can make a
// call panic.

// seen is one sync call as the probe saw it.
type seen struct {
	fn         string
	uid        types.UID
	updateType UpdateType
	version    string // the pod's ResourceVersion
	mirror     string // the mirror pod's name, "" when none
	grace      int64  // SyncTerminatingPod: the grace period, -1 when nil
	reason     string // SyncTerminatingPod: Reason written by the status function
	status     *PodStatus
	err        error // what the call returned
	ctxDone    bool  // the call's context was done when it returned
}

type probeKey struct {
	uid types.UID
	fn  string
}

// probe is the PodSyncer of a tenv: it wraps the harness's recorder, which
// still records the calls and plays the scripted outcomes.
type probe struct {
	rec *recorder

	mu        sync.Mutex
	running   map[types.UID]string // the call in progress for each UID
	inFlight  int                  // calls in progress, all UIDs
	maxFlight int
	overlaps  []string
	waits     map[probeKey][]chan struct{}
	panics    map[probeKey]int
	pauses    map[types.UID]*pause
	seen      []seen
	events    []string // "begin uid/fn" and "end uid/fn", in order
}

func newProbe(rec *recorder) *probe {
	return &probe{rec: rec, running: map[types.UID]string{}, waits: map[probeKey][]chan struct{}{}, panics: map[probeKey]int{}, pauses: map[types.UID]*pause{}}
}

// entered returns a channel closed when the next call of fn for uid begins.
func (p *probe) entered(uid types.UID, fn string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch := make(chan struct{})
	k := probeKey{uid, fn}
	p.waits[k] = append(p.waits[k], ch)
	return ch
}

// panicNext makes the next n calls of fn for uid panic after the recorder
// saw them.
func (p *probe) panicNext(uid types.UID, fn string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.panics[probeKey{uid, fn}] += n
}

// pause holds the next call for one UID, whatever its function, before the
// recorder sees it; the call then goes on when resumed, even if its context
// was cancelled (a syncer may ignore its context).
type pause struct {
	entered chan struct{}
	resume  chan struct{}
}

// pauseNext pauses the next call for uid.
func (p *probe) pauseNext(uid types.UID) *pause {
	p.mu.Lock()
	defer p.mu.Unlock()
	pz := &pause{entered: make(chan struct{}), resume: make(chan struct{})}
	p.pauses[uid] = pz
	return pz
}

// unpause withdraws a pause no call took.
func (p *probe) unpause(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pauses, uid)
}

// begin notes that a call begins and holds it if it was paused.
func (p *probe) begin(uid types.UID, fn string) {
	if pz := p.enter(uid, fn); pz != nil {
		close(pz.entered)
		<-pz.resume
	}
}

func (p *probe) enter(uid types.UID, fn string) *pause {
	p.mu.Lock()
	defer p.mu.Unlock()
	pz := p.pauses[uid]
	delete(p.pauses, uid)
	if cur := p.running[uid]; cur != "" {
		p.overlaps = append(p.overlaps, fmt.Sprintf("pod %s: %s began while %s was running", uid, fn, cur))
	}
	p.running[uid] = fn
	p.events = append(p.events, "begin "+string(uid)+"/"+fn)
	p.inFlight++
	p.maxFlight = max(p.maxFlight, p.inFlight)
	k := probeKey{uid, fn}
	if q := p.waits[k]; len(q) > 0 {
		close(q[0])
		p.waits[k] = q[1:]
	}
	return pz
}

func (p *probe) end(ctx context.Context, s seen, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, s.uid)
	p.events = append(p.events, "end "+string(s.uid)+"/"+s.fn)
	p.inFlight--
	s.err, s.ctxDone = err, ctx.Err() != nil
	p.seen = append(p.seen, s)
}

func (p *probe) maybePanic(uid types.UID, fn string) {
	p.mu.Lock()
	k := probeKey{uid, fn}
	n := p.panics[k]
	if n > 0 {
		p.panics[k] = n - 1
	}
	p.mu.Unlock()
	if n > 0 {
		panic(fmt.Sprintf("injected panic in %s", fn))
	}
}

func (p *probe) SyncPod(ctx context.Context, t UpdateType, pod, mirror *v1.Pod, st *PodStatus) (term bool, err error) {
	s := seen{fn: "SyncPod", uid: pod.UID, updateType: t, version: pod.ResourceVersion, grace: -1, status: st}
	if mirror != nil {
		s.mirror = mirror.Name
	}
	p.begin(s.uid, s.fn)
	defer func() { p.end(ctx, s, err) }()
	term, err = p.rec.SyncPod(ctx, t, pod, mirror, st)
	p.maybePanic(s.uid, s.fn)
	return term, err
}

func (p *probe) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, st *PodStatus, grace *int64, fn func(*v1.PodStatus)) (err error) {
	s := seen{fn: "SyncTerminatingPod", uid: pod.UID, version: pod.ResourceVersion, grace: -1, status: st}
	if grace != nil {
		s.grace = *grace
	}
	if fn != nil {
		var status v1.PodStatus
		fn(&status)
		s.reason = status.Reason
	}
	p.begin(s.uid, s.fn)
	defer func() { p.end(ctx, s, err) }()
	err = p.rec.SyncTerminatingPod(ctx, pod, st, grace, fn)
	p.maybePanic(s.uid, s.fn)
	return err
}

func (p *probe) SyncTerminatingRuntimePod(ctx context.Context, rp *RunningPod) (err error) {
	s := seen{fn: "SyncTerminatingRuntimePod", uid: rp.ID, grace: -1}
	p.begin(s.uid, s.fn)
	defer func() { p.end(ctx, s, err) }()
	err = p.rec.SyncTerminatingRuntimePod(ctx, rp)
	p.maybePanic(s.uid, s.fn)
	return err
}

func (p *probe) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, st *PodStatus) (err error) {
	s := seen{fn: "SyncTerminatedPod", uid: pod.UID, version: pod.ResourceVersion, grace: -1, status: st}
	p.begin(s.uid, s.fn)
	defer func() { p.end(ctx, s, err) }()
	err = p.rec.SyncTerminatedPod(ctx, pod, st)
	p.maybePanic(s.uid, s.fn)
	return err
}

// calls lists the calls for uid that returned, in order.
func (p *probe) calls(uid types.UID) []seen {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []seen
	for _, s := range p.seen {
		if s.uid == uid {
			out = append(out, s)
		}
	}
	return out
}

// begun counts the calls for uid that began, held ones included (the
// recorder sees a call only after the probe signalled that it began).
func (p *probe) begun(uid types.UID) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, ev := range p.events {
		if strings.HasPrefix(ev, "begin "+string(uid)+"/") {
			n++
		}
	}
	return n
}

// seenOrder lists the beginnings and ends of every call, in order.
func (p *probe) seenOrder() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.events)
}

// tenv is the harness env with a probe as its syncer.
type tenv struct {
	*env
	p *probe
}

// start returns a running engine on a fake clock. At cleanup it stops the
// engine, fails the test if calls for one UID ever overlapped, and checks
// that no goroutine leaked.
func start(t *testing.T, opts Options) *tenv {
	t.Helper()
	ignore := goleak.IgnoreCurrent() // before the engine starts: its goroutines must be gone at the end
	e := &env{t: t, rec: newRecorder(), clock: clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0))}
	p := newProbe(e.rec)
	opts.Clock = e.clock
	e.w = New(p, opts)
	t.Cleanup(func() {
		e.w.Stop()
		p.mu.Lock()
		overlaps := p.overlaps
		p.mu.Unlock()
		for _, o := range overlaps {
			t.Errorf("overlapping sync calls: %s", o)
		}
		goleak.VerifyNone(t, ignore)
	})
	return &tenv{env: e, p: p}
}

// waitIdle blocks until no worker loop runs (w.runningLoops is 0): every update
// given so far was taken and every sync call it caused returned.
func (w *PodWorkers) waitIdle() {
	w.mu.Lock()
	for w.runningLoops > 0 {
		w.idle.Wait()
	}
	w.mu.Unlock()
}

func (e *tenv) backoff() time.Duration { return e.w.core.backoff }
func (e *tenv) resync() time.Duration  { return e.w.core.resync }

// send delivers an update without waiting for the worker.
func (e *tenv) send(o UpdatePodOptions) {
	e.t.Helper()
	if err := e.w.UpdatePod(o); err != nil {
		e.t.Fatalf("UpdatePod: %v", err)
	}
}

// step moves the fake clock and fires due timers without waiting for the
// workers (use it while a call is blocked; advance settles).
func (e *tenv) step(d time.Duration) {
	e.clock.Step(d)
	e.w.fireDue()
}

// locked runs f with the engine's lock held: every call f makes on the Core
// happens before any worker loop can take the next update, which is how the
// tests reproduce updates that arrive before a worker goroutine gets to run.
// Then, as every PodWorkers method does, it carries out the effects the
// Core recorded: loops and timers under the lock, channels and
// cancellations after it.
func (e *tenv) locked(f func(c *Core)) {
	e.w.mu.Lock()
	f(e.w.core)
	later, _ := e.w.settle(nil, "")
	e.w.mu.Unlock()
	finish(later)
}

// coreUpdate is UpdatePod on the Core, for use inside locked.
func (e *tenv) coreUpdate(c *Core, o UpdatePodOptions) {
	e.t.Helper()
	if err := c.UpdatePod(o); err != nil {
		e.t.Fatalf("Core.UpdatePod: %v", err)
	}
}

// gate is a scripted call that blocks until released or cancelled.
type gate struct {
	entered <-chan struct{}
	ch      chan struct{}
	once    sync.Once
}

func (g *gate) release() { g.once.Do(func() { close(g.ch) }) }

// hold scripts the next call of fn for uid to block, then to return out's
// result. It must be the only outcome scripted for (uid, fn) at that time.
func (e *tenv) hold(uid types.UID, fn string, out outcome) *gate {
	g := &gate{ch: make(chan struct{})}
	out.block = g.ch
	g.entered = e.p.entered(uid, fn)
	e.rec.script(uid, fn, out)
	return g
}

// wait blocks until the gate's call began.
func (g *gate) wait() { <-g.entered }

func (e *tenv) wantFns(uid types.UID, want ...string) {
	e.t.Helper()
	if got := e.rec.fns(uid); !slices.Equal(got, want) {
		e.t.Fatalf("pod %s: calls %v, want %v", uid, got, want)
	}
}

func (e *tenv) wantGraces(uid types.UID, want ...int64) {
	e.t.Helper()
	var got []int64
	for _, s := range e.p.calls(uid) {
		if s.fn == "SyncTerminatingPod" {
			got = append(got, s.grace)
		}
	}
	if !slices.Equal(got, want) {
		e.t.Fatalf("pod %s: SyncTerminatingPod grace periods %v, want %v", uid, got, want)
	}
}

func wantClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Fatalf("%s: channel still open", what)
	}
}

func wantOpen(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s: channel closed", what)
	default:
	}
}

// Pods and updates.

func withVersion(p *v1.Pod, rv string) *v1.Pod {
	q := p.DeepCopy()
	q.ResourceVersion = rv
	return q
}

// deleting returns the pod with a deletion timestamp and grace period.
func deleting(p *v1.Pod, grace int64) *v1.Pod {
	q := p.DeepCopy()
	ts := metav1.NewTime(time.Unix(1_700_000_000, 0))
	q.DeletionTimestamp, q.DeletionGracePeriodSeconds = &ts, &grace
	return q
}

func inPhase(p *v1.Pod, phase v1.PodPhase) *v1.Pod {
	q := p.DeepCopy()
	q.Status.Phase = phase
	return q
}

func createOp(p *v1.Pod) UpdatePodOptions { return UpdatePodOptions{UpdateType: SyncPodCreate, Pod: p} }
func updateOp(p *v1.Pod) UpdatePodOptions { return UpdatePodOptions{UpdateType: SyncPodUpdate, Pod: p} }
func syncOp(p *v1.Pod) UpdatePodOptions   { return UpdatePodOptions{UpdateType: SyncPodSync, Pod: p} }

func killOp(p *v1.Pod, kpo *KillPodOptions) UpdatePodOptions {
	return UpdatePodOptions{UpdateType: SyncPodKill, Pod: p, KillPodOptions: kpo}
}

func runningPod(uid, name string) *RunningPod {
	return &RunningPod{ID: types.UID(uid), Name: name, Namespace: "default"}
}

// runtimeKillOp is a kill of a pod known only to the runtime.
func runtimeKillOp(uid, name string, kpo *KillPodOptions) UpdatePodOptions {
	return UpdatePodOptions{UpdateType: SyncPodKill, RunningPod: runningPod(uid, name), KillPodOptions: kpo}
}

// notify returns kill options with a fresh completion channel.
func notify(grace *int64) (*KillPodOptions, chan struct{}) {
	ch := make(chan struct{})
	return &KillPodOptions{CompletedCh: ch, PodTerminationGracePeriodSecondsOverride: grace}, ch
}

func statusReason(reason string) func(*v1.PodStatus) {
	return func(s *v1.PodStatus) { s.Reason = reason }
}

// fakeCache is a StatusCache. A UID without an entry reads as running.
type fakeCache struct {
	mu       sync.Mutex
	statuses map[types.UID]*PodStatus
	err      error
}

func newFakeCache() *fakeCache { return &fakeCache{statuses: map[types.UID]*PodStatus{}} }

func (c *fakeCache) Get(uid types.UID) (*PodStatus, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	if s, ok := c.statuses[uid]; ok {
		return s, nil
	}
	return runningStatus(uid), nil
}

func (c *fakeCache) set(uid types.UID, s *PodStatus) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.statuses[uid] = s
}

func (c *fakeCache) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
}

func runningStatus(uid types.UID) *PodStatus {
	return &PodStatus{ID: uid,
		SandboxStatuses:   []*runtimeapi.PodSandboxStatus{{State: runtimeapi.PodSandboxState_SANDBOX_READY}},
		ContainerStatuses: []*runtimeapi.ContainerStatus{{State: runtimeapi.ContainerState_CONTAINER_RUNNING}},
	}
}

// exitedStatus has no running container and no ready sandbox.
func exitedStatus(uid types.UID) *PodStatus {
	return &PodStatus{ID: uid,
		SandboxStatuses:   []*runtimeapi.PodSandboxStatus{{State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY}},
		ContainerStatuses: []*runtimeapi.ContainerStatus{{State: runtimeapi.ContainerState_CONTAINER_EXITED}},
	}
}

// rowLog is an fsm.Observer that counts the rows that fired.
type rowLog struct {
	mu       sync.Mutex
	rows     map[string]int
	rejected []string
}

func newRowLog() *rowLog { return &rowLog{rows: map[string]int{}} }

func (l *rowLog) Transition(t fsm.Transition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows[t.Row]++
}

func (l *rowLog) Rejected(uid types.UID, s fsm.State, ev fsm.Event, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rejected = append(l.rejected, fmt.Sprintf("pod %s: %s in %s: %v", uid, ev, s, err))
}

func (l *rowLog) fired() map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]bool, len(l.rows))
	for r := range l.rows {
		out[r] = true
	}
	return out
}

// logSink is a slog handler that keeps the messages logged.
type logSink struct {
	mu   sync.Mutex
	msgs []string
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	s.msgs = append(s.msgs, b.String())
	return nil
}
func (s *logSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *logSink) WithGroup(string) slog.Handler      { return s }

func (s *logSink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

func (s *logSink) count(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.msgs {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}
