package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/fsm"
)

// ErrStopped is returned by UpdatePod after Stop, and wrapped by the error
// of a KillPod call that Stop ended before the pod terminated.
var ErrStopped = errors.New("pod workers stopped")

// PodWorkers is the engine node agents embed: one authority per pod UID
// that knows whether its containers may start, must stop, or are gone. It
// is the goroutine shell around a Core: it feeds the Core its inputs under
// one mutex and carries out the effects the Core returns. A pod's worker
// loop runs on one of the engine's runners only while the pod has work (an
// idle or finished pod has no goroutine; see runners), and one goroutine
// runs every timer. All methods are safe for concurrent use.
type PodWorkers struct {
	mu       sync.Mutex
	core     *Core
	syncer   PodSyncer
	cache    StatusCache // nil: the Core hands out identity statuses
	clock    clock.WithTicker
	log      *slog.Logger
	recorder EventRecorder // nil: no events
	// statuses is cache unless the syncer reads the runtime itself
	// (Options.SyncersReadRuntime): the statuses handed to the syncer.
	statuses StatusCache

	// Guarded by mu:
	//   - timers holds each pod's armed timer (ArmTimer, StopTimer).
	//   - runningLoops counts, over all pods, the worker loops started (a
	//     pod queued for a runner, or a run handed to a KillPod caller)
	//     whose runLoop has not returned; idle is broadcast whenever one
	//     returns, and whenever a runner ends.
	//   - run holds the runners and their queue.
	//   - stopped is set by Stop; from then on no loop starts and running
	//     ones end before their next sync call.
	//   - taken holds the Core's effects while settle sorts them.
	//   - waiters maps the Core's waiter IDs to the kill completion
	//     channels registered with UpdatePod (lastWaiter numbers them).
	//   - syncCtxs holds the context of each pod's sync calls, from its
	//     first Work until the Core's CancelSync.
	timers       *timerQueue
	runningLoops int
	idle         *sync.Cond
	stopped      bool
	taken        []Effect
	waiters      map[WaiterID]chan<- struct{}
	lastWaiter   WaiterID
	syncCtxs     map[types.UID]*podContext
	run          runners

	rearm  chan struct{} // the earliest timer changed; capacity 1
	stopCh chan struct{} // closed by Stop
	done   chan struct{} // closed when the timer goroutine exits
}

// New returns a running engine that calls syncer for every pod.
func New(syncer PodSyncer, opts Options) *PodWorkers {
	opts = opts.withDefaults()
	w := &PodWorkers{
		syncer: syncer, cache: opts.StatusCache, statuses: opts.StatusCache, clock: opts.Clock, log: opts.Logger, recorder: opts.Recorder, timers: newTimerQueue(),
		waiters: map[WaiterID]chan<- struct{}{}, syncCtxs: map[types.UID]*podContext{},
		rearm: make(chan struct{}, 1), stopCh: make(chan struct{}), done: make(chan struct{}),
	}
	if opts.SyncersReadRuntime {
		w.statuses = nil
	}
	w.idle = sync.NewCond(&w.mu)
	w.run.cond = sync.NewCond(&w.mu)
	w.core = NewCore(opts)
	go w.schedule()
	return w
}

// UpdatePod delivers a configuration change or termination request for one
// pod UID (semantics 1.4). It never blocks on sync work; the latest update
// wins, and kills are latched into the record at once. It returns an error
// only for invalid input (wrapping ErrInvalidUpdate) or after Stop.
func (w *PodWorkers) UpdatePod(opts UpdatePodOptions) error {
	in := w.input(&opts)
	w.mu.Lock()
	err := w.updatePod(opts, in)
	var buf [4]action
	later, _ := w.settle(buf[:0], "")
	w.mu.Unlock()
	finish(later)
	return err
}

// input reads, before the lock, the runtime-terminal fact the Core takes
// with an update of a pod in a terminal phase (semantics T2): the status
// cache is the runtime's, and a read of it under the engine's lock would
// make every pod wait for it.
func (w *PodWorkers) input(opts *UpdatePodOptions) UpdateInput {
	if w.cache == nil || !terminalPhase(opts) {
		return UpdateInput{}
	}
	s, err := w.cache.Get(opts.Pod.UID)
	return UpdateInput{RuntimeTerminal: err == nil && s != nil && runtimeTerminal(s)}
}

// updatePod is UpdatePod with mu held: it registers the kill's completion
// channel under a waiter ID and hands the update to the Core.
func (w *PodWorkers) updatePod(opts UpdatePodOptions, in UpdateInput) error {
	var ch chan<- struct{}
	if opts.KillPodOptions != nil {
		ch = opts.KillPodOptions.CompletedCh
	}
	if w.stopped {
		if ch != nil {
			close(ch)
		}
		return ErrStopped
	}
	if ch != nil {
		w.lastWaiter++
		in.Waiter = w.lastWaiter
		w.waiters[in.Waiter] = ch
	}
	return w.core.UpdatePod(opts, in)
}

// SyncKnownPods reconciles the workers with the desired pods: finished
// records of undesired or restarting UIDs are removed, orphans are driven
// to termination, and every remaining record is returned. The caller must
// send a create for desired pods missing from the result.
func (w *PodWorkers) SyncKnownPods(desired []*v1.Pod) map[types.UID]PodWorkerSync {
	w.mu.Lock()
	out := w.core.SyncKnownPods(desired)
	later, _ := w.settle(nil, "")
	w.mu.Unlock()
	finish(later)
	return out
}

// KillPod asks for the pod's termination and blocks until no container of
// it runs, ctx ends, or the engine stops (it then returns an error wrapping
// ErrStopped). A nil gracePeriodOverride keeps the pod's own. A nil ctx is
// invalid input (ErrInvalidUpdate).
//
// When ctx cannot end (its Done returns nil, as context.Background's does)
// and the kill starts the pod's worker loop, the caller's goroutine runs
// that loop itself, so the syncer's terminating calls run on it: the
// caller would only wait anyway, and sparing the hand-off to a new
// goroutine halves the median kill latency (BenchmarkKillToTerminated).
// Once the pod terminated, the rest of the loop (the cleanup) goes on on a
// goroutine of the engine and KillPod returns. With a context that can
// end, or when the pod's loop already runs, an engine goroutine runs it.
func (w *PodWorkers) KillPod(ctx context.Context, pod *v1.Pod, evict bool, gracePeriodOverride *int64, statusFn func(*v1.PodStatus)) error {
	if ctx == nil {
		return invalid("KillPod with a nil context")
	}
	done := make(chan struct{})
	opts := UpdatePodOptions{
		UpdateType: SyncPodKill, Pod: pod,
		KillPodOptions: &KillPodOptions{CompletedCh: done, Evict: evict, PodStatusFunc: statusFn, PodTerminationGracePeriodSecondsOverride: gracePeriodOverride},
	}
	var inline types.UID
	if ctx.Done() == nil && pod != nil {
		inline = pod.UID
	}
	in := w.input(&opts)
	w.mu.Lock()
	err := w.updatePod(opts, in)
	var buf [4]action
	later, runInline := w.settle(buf[:0], inline)
	w.mu.Unlock()
	finish(later)
	if runInline {
		w.mu.Lock()
		w.runLoop(inline, done, nil)
		w.mu.Unlock()
	}
	if err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("killing pod %s/%s: %w", pod.Namespace, pod.Name, ctx.Err())
	case <-w.stopCh:
		// No pod terminates after Stop: the kill's channel is never
		// closed, unless a sync that was in flight got there first.
		if isClosed(done) {
			return nil
		}
		return fmt.Errorf("killing pod %s/%s: %w", pod.Namespace, pod.Name, ErrStopped)
	}
}

// Stop cancels every sync in flight, stops the timers and waits until no
// goroutine of the engine runs. Syncers must return when their context is
// cancelled.
func (w *PodWorkers) Stop() {
	w.mu.Lock()
	if !w.stopped {
		w.stopped = true
		w.core.CancelAll()
		close(w.stopCh)
		w.run.cond.Broadcast() // parked runners end
	}
	later, _ := w.settle(nil, "")
	w.mu.Unlock()
	finish(later)
	<-w.done
	w.mu.Lock()
	for w.runningLoops > 0 || w.run.alive > 0 {
		w.idle.Wait()
	}
	w.mu.Unlock()
}

// action is an effect that wakes others, carried out once mu is released:
// closing a kill completion channel wakes its waiters, and they should not
// wake to find mu held. (Cancelling a sync context is not one: a
// podContext's cancel wakes no one unless a syncer watches it, and runs
// its AfterFunc callbacks on goroutines of their own, so settle cancels at
// once; deferring it cost a runner an unlock and a lock per finished pod,
// the lock most contended in BenchmarkCmpLifecycle's mutex profile.)
type action struct {
	close chan<- struct{}
}

// syncContext returns the context of the pod's sync calls (mu held),
// making one if the pod has none.
func (w *PodWorkers) syncContext(uid types.UID) *podContext {
	if c, ok := w.syncCtxs[uid]; ok {
		return c
	}
	c := &podContext{}
	w.syncCtxs[uid] = c
	return c
}

// settle takes the Core's effects (mu held). Loops start, timers change
// and sync contexts are cancelled at once; the closing of a kill
// completion channel (it wakes its waiters) is appended to later, to be
// carried out by finish once mu is released. A RunLoop for inline is
// not started: settle reports it, and its caller runs the loop.
func (w *PodWorkers) settle(later []action, inline types.UID) (_ []action, runInline bool) {
	w.taken = w.core.TakeEffects(w.taken[:0])
	for _, e := range w.taken {
		switch e.Kind {
		case RunLoop:
			if w.stopped {
				continue
			}
			w.runningLoops++
			if inline != "" && e.UID == inline {
				runInline = true
				continue
			}
			w.startLoop(e.UID)
		case ArmTimer:
			if w.timers.set(e.UID, w.clock.Now().Add(e.Delay)) {
				select {
				case w.rearm <- struct{}{}:
				default:
				}
			}
		case StopTimer:
			w.timers.remove(e.UID)
		case CloseChannel:
			if ch, ok := w.waiters[e.Waiter]; ok {
				delete(w.waiters, e.Waiter)
				later = append(later, action{close: ch})
			}
		case CancelSync:
			if c, ok := w.syncCtxs[e.UID]; ok {
				delete(w.syncCtxs, e.UID)
				c.detached = true
				c.cancel()
			}
		}
	}
	return later, runInline
}

// finish carries out the actions settle left for after the unlock, and
// clears them (a runner reuses the buffer: it must not keep a channel
// alive).
func finish(later []action) {
	for _, a := range later {
		close(a.close)
	}
	clear(later)
}

// runLoop makes the pod's sync calls one at a time, without the lock, until
// the pod has nothing to run or the engine stops; mu is held on entry and
// on return. It runs on a runner, or, with a non-nil until, on a KillPod
// caller's goroutine: it then hands the rest of the loop to the runners
// once until is closed. scratch, if not nil, is the caller's buffer for
// the actions of each step (a runner keeps one: a step's channel close would
// otherwise allocate).
func (w *PodWorkers) runLoop(uid types.UID, until <-chan struct{}, scratch []action) {
	onRunner := until == nil
	// ctx is the pod's sync context while it is the one in syncCtxs
	// (until a CancelSync detaches it): a loop makes its pod's calls in
	// a row, and keeping it spares a lookup per call.
	var ctx *podContext
	defer func() {
		w.runningLoops--
		w.idle.Broadcast() // Stop and tests wait for no loop to run
	}()
	for !w.stopped {
		if until != nil && isClosed(until) {
			w.runningLoops++
			w.startLoop(uid) // the loop goes on on a runner
			return
		}
		work, ok := w.core.Next(uid)
		later, _ := w.settle(scratch[:0], "")
		if !ok {
			w.unlocked(later)
			return
		}
		if ctx == nil || ctx.detached {
			ctx = w.syncContext(uid)
		}
		if onRunner {
			w.leaving()
		}
		w.mu.Unlock()
		finish(later)
		isTerminal, err := w.call(ctx, work)
		w.mu.Lock()
		if onRunner {
			w.run.awake++
		}
		w.core.Done(work, isTerminal, err)
		later, _ = w.settle(scratch[:0], "")
		w.unlocked(later)
	}
}

// unlocked carries out later's effects without mu (mu held on entry and on
// return); with none it keeps the lock.
func (w *PodWorkers) unlocked(later []action) {
	if len(later) == 0 {
		return
	}
	w.mu.Unlock()
	finish(later)
	w.mu.Lock()
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// call makes one sync call, with the pod's runtime status from the status
// cache (a failed read fails the call without calling the syncer), unless
// the syncer reads the runtime itself. A panic
// in the syncer is a failed sync whose error is a *PanicError (the Core
// counts it and backs off longer); it is logged and, for a pod with a
// config, recorded as a Warning event.
func (w *PodWorkers) call(ctx context.Context, work Work) (isTerminal bool, err error) {
	if w.statuses != nil && work.Func != fsm.InFlightSyncTerminatingRuntimePod {
		if work.Status, err = w.statuses.Get(work.UID); err != nil {
			return false, err
		}
	}
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Func: work.Func, Value: r}
			w.log.Error("sync function panicked", "pod", work.UID, "err", err)
			if w.recorder != nil && work.Pod != nil { // a runtime-only pod has no object to hold an event
				w.recorder.Eventf(work.Pod, v1.EventTypeWarning, SyncPanicReason, "%s panicked: %s", work.Func, truncate(fmt.Sprint(r), maxEventValue))
			}
		}
	}()
	switch work.Func {
	case fsm.InFlightSyncPod:
		return w.syncer.SyncPod(ctx, work.UpdateType, work.Pod, work.MirrorPod, work.Status)
	case fsm.InFlightSyncTerminatingPod:
		return false, w.syncer.SyncTerminatingPod(ctx, work.Pod, work.Status, work.GracePeriod, work.StatusFn)
	case fsm.InFlightSyncTerminatingRuntimePod:
		return false, w.syncer.SyncTerminatingRuntimePod(ctx, work.RunningPod)
	case fsm.InFlightSyncTerminatedPod:
		return false, w.syncer.SyncTerminatedPod(ctx, work.Pod, work.Status)
	}
	return false, fmt.Errorf("unknown sync function %s", work.Func)
}

// maxEventValue bounds the panic value a SyncPanic event quotes: a panic
// may carry a whole object, and an event is read at a glance (the log has
// it all).
const maxEventValue = 256

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// schedule is the engine's one timer goroutine: it waits for the earliest
// due pod and hands due pods to Core.Timer.
func (w *PodWorkers) schedule() {
	defer close(w.done)
	var timer clock.Timer
	var due <-chan time.Time
	for {
		select {
		case <-w.stopCh:
			if timer != nil {
				timer.Stop()
			}
			return
		case <-w.rearm:
		case <-due:
			w.fireDue()
		}
		if timer != nil {
			timer.Stop()
			timer, due = nil, nil
		}
		w.mu.Lock()
		next, ok := w.timers.earliest()
		w.mu.Unlock()
		if ok {
			timer = w.clock.NewTimer(max(0, next.Sub(w.clock.Now())))
			due = timer.C()
		}
	}
}

// fireDue runs Core.Timer for every pod whose time has come.
func (w *PodWorkers) fireDue() {
	w.mu.Lock()
	now := w.clock.Now()
	for {
		uid, _, ok := w.timers.popDue(now)
		if !ok {
			break
		}
		w.core.Timer(uid)
	}
	later, _ := w.settle(nil, "")
	w.mu.Unlock()
	finish(later)
}
