package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/fsm"
)

// ErrStopped is returned by UpdatePod after Stop.
var ErrStopped = errors.New("pod workers stopped")

// PodWorkers is the engine node agents embed: one authority per pod UID
// that knows whether its containers may start, must stop, or are gone. It
// is the goroutine shell around a Core: a worker loop runs for a pod only
// while it has work (an idle or finished pod has no goroutine), and one
// goroutine runs every timer. All methods are safe for concurrent use.
type PodWorkers struct {
	mu     sync.Mutex
	core   *Core
	syncer PodSyncer
	clock  clock.WithTicker
	log    *slog.Logger

	// Guarded by mu:
	//   - loops counts worker loops: queued in runq or being run; idle is
	//     signalled whenever one ends.
	//   - runq lists the pods whose loop no goroutine runs yet, in order.
	//   - workers counts worker goroutines; parked of them wait on work for
	//     runq, syncing of them are inside a sync call. A pod in runq gets a
	//     new goroutine only when every worker is inside a sync call, so
	//     fast syncers need few goroutines and slow ones never hold up
	//     other pods; at most maxParked wait, so idle pods own none.
	timers                   *timerQueue
	loops                    int
	idle                     *sync.Cond
	runq                     []types.UID
	work                     *sync.Cond
	workers, parked, syncing int
	stopped                  bool
	// pool counts worker goroutines, for Stop.
	pool sync.WaitGroup

	rearm  chan struct{} // the earliest timer changed; capacity 1
	stopCh chan struct{} // closed by Stop
	done   chan struct{} // closed when the timer goroutine exits
}

// New returns a running engine that calls syncer for every pod.
func New(syncer PodSyncer, opts Options) *PodWorkers {
	opts = opts.withDefaults()
	w := &PodWorkers{
		syncer: syncer, clock: opts.Clock, log: opts.Logger, timers: newTimerQueue(),
		rearm: make(chan struct{}, 1), stopCh: make(chan struct{}), done: make(chan struct{}),
	}
	w.idle = sync.NewCond(&w.mu)
	w.work = sync.NewCond(&w.mu)
	w.core = NewCore((*driver)(w), opts)
	go w.schedule()
	return w
}

// UpdatePod delivers a configuration change or termination request for one
// pod UID (reference 1.4). It never blocks on sync work; the latest update
// wins, and kills are latched into the record at once. It returns an error
// only for invalid input (wrapping ErrInvalidUpdate) or after Stop.
func (w *PodWorkers) UpdatePod(opts UpdatePodOptions) error {
	w.mu.Lock()
	err := w.updatePod(opts)
	w.mu.Unlock()
	return err
}

// updatePod is UpdatePod with mu held.
func (w *PodWorkers) updatePod(opts UpdatePodOptions) error {
	if w.stopped {
		if opts.KillPodOptions != nil && opts.KillPodOptions.CompletedCh != nil {
			close(opts.KillPodOptions.CompletedCh)
		}
		return ErrStopped
	}
	return w.core.UpdatePod(opts)
}

// SyncKnownPods reconciles the workers with the desired pods: finished
// records of undesired or restarting UIDs are removed, orphans are driven
// to termination, and every remaining record is returned. The caller must
// send a create for desired pods missing from the result.
func (w *PodWorkers) SyncKnownPods(desired []*v1.Pod) map[types.UID]PodWorkerSync {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.core.SyncKnownPods(desired)
}

// KillPod asks for the pod's termination and blocks until no container of
// it runs, or ctx ends. A nil gracePeriodOverride keeps the pod's own. When
// ctx cannot end and the pod has no worker loop running, the caller's
// goroutine runs the pod's sync calls itself until the pod terminated: it
// would only wait for them anyway.
func (w *PodWorkers) KillPod(ctx context.Context, pod *v1.Pod, evict bool, gracePeriodOverride *int64, statusFn func(*v1.PodStatus)) error {
	done := make(chan struct{})
	opts := UpdatePodOptions{
		UpdateType: SyncPodKill, Pod: pod,
		KillPodOptions: &KillPodOptions{CompletedCh: done, Evict: evict, PodStatusFunc: statusFn, PodTerminationGracePeriodSecondsOverride: gracePeriodOverride},
	}
	w.mu.Lock()
	err := w.updatePod(opts)
	inline := err == nil && ctx.Done() == nil && w.takeQueued(pod.UID)
	if inline {
		w.runLoop(pod.UID, done)
	}
	w.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("killing pod %s/%s: %w", pod.Namespace, pod.Name, ctx.Err())
	}
}

// takeQueued removes uid from the run queue, so that the caller can run its
// loop itself.
func (w *PodWorkers) takeQueued(uid types.UID) bool {
	if i := slices.Index(w.runq, uid); i >= 0 {
		w.runq = slices.Delete(w.runq, i, i+1)
		return true
	}
	return false
}

// Stop cancels every sync in flight, stops the timers and waits until no
// goroutine of the engine runs. Syncers must return when their context is
// cancelled.
func (w *PodWorkers) Stop() {
	w.mu.Lock()
	if !w.stopped {
		w.stopped = true
		w.core.cancelAll()
		close(w.stopCh)
		w.work.Broadcast()
	}
	w.mu.Unlock()
	<-w.done
	w.waitIdle()
	w.pool.Wait()
}

// waitIdle blocks until no worker loop runs.
func (w *PodWorkers) waitIdle() {
	w.mu.Lock()
	for w.loops > 0 {
		w.idle.Wait()
	}
	w.mu.Unlock()
}

// runLoop is a pod's worker loop, run with mu held: it makes the pod's sync
// calls one at a time, without the lock, until the pod has nothing to run.
// With a non-nil until (KillPod runs the loop on its caller's goroutine) it
// returns early once until is closed, and queues the rest of the loop for
// a worker goroutine.
func (w *PodWorkers) runLoop(uid types.UID, until <-chan struct{}) {
	for !w.stopped {
		if until != nil && isClosed(until) {
			w.enqueue(uid) // the loop goes on elsewhere
			return
		}
		work, ok := w.core.Next(uid)
		if !ok {
			break
		}
		if until == nil { // a worker: queued pods must not wait for this call
			w.syncing++
			w.serve()
		}
		w.mu.Unlock()
		isTerminal, err := w.call(work)
		w.mu.Lock()
		if until == nil {
			w.syncing--
		}
		w.core.Done(work, isTerminal, err)
	}
	w.loops--
	w.idle.Broadcast() // waiters check their own condition (waitIdle: no loop left)
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// maxParked bounds the worker goroutines that wait for work.
var maxParked = runtime.GOMAXPROCS(0)

// enqueue queues a pod's loop for a worker goroutine (mu held).
func (w *PodWorkers) enqueue(uid types.UID) {
	w.runq = append(w.runq, uid)
	w.serve()
}

// serve makes sure a goroutine will take the queued loops (mu held): a
// parked worker is woken; a new one starts only if every worker is inside
// a sync call (the others take the queue when their pod is idle).
func (w *PodWorkers) serve() {
	switch {
	case len(w.runq) == 0:
	case w.parked > 0:
		w.work.Signal()
	case w.syncing == w.workers:
		w.workers++
		w.pool.Add(1)
		go w.worker()
	}
}

// worker runs queued pod loops until the engine stops, or until enough
// other workers wait for work.
func (w *PodWorkers) worker() {
	defer w.pool.Done()
	w.mu.Lock()
	defer w.mu.Unlock()
	for !w.stopped {
		if len(w.runq) > 0 {
			uid := w.runq[0]
			w.runq = w.runq[1:]
			w.runLoop(uid, nil)
			continue
		}
		if w.parked >= maxParked {
			break
		}
		w.parked++
		w.work.Wait()
		w.parked--
	}
	w.workers--
}

// call makes one sync call; a panic in the syncer is a failed sync.
func (w *PodWorkers) call(work Work) (isTerminal bool, err error) {
	if work.Err != nil {
		return false, work.Err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s panicked: %v", work.Func, r)
			w.log.Error("sync function panicked", "pod", work.UID, "err", err)
		}
	}()
	switch work.Func {
	case fsm.InFlightSyncPod:
		return w.syncer.SyncPod(work.Ctx, work.UpdateType, work.Pod, work.MirrorPod, work.Status)
	case fsm.InFlightSyncTerminatingPod:
		return false, w.syncer.SyncTerminatingPod(work.Ctx, work.Pod, work.Status, work.GracePeriod, work.StatusFn)
	case fsm.InFlightSyncTerminatingRuntimePod:
		return false, w.syncer.SyncTerminatingRuntimePod(work.Ctx, work.RunningPod)
	case fsm.InFlightSyncTerminatedPod:
		return false, w.syncer.SyncTerminatedPod(work.Ctx, work.Pod, work.Status)
	}
	return false, fmt.Errorf("unknown sync function %s", work.Func)
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
	defer w.mu.Unlock()
	now := w.clock.Now()
	for {
		uid, ok := w.timers.popDue(now)
		if !ok {
			return
		}
		w.core.Timer(uid)
	}
}

// driver is PodWorkers as the Core's Driver; its methods run with mu held.
type driver PodWorkers

func (d *driver) Run(uid types.UID) {
	w := (*PodWorkers)(d)
	if w.stopped {
		return
	}
	w.loops++
	w.enqueue(uid)
}

func (d *driver) After(uid types.UID, delay time.Duration) {
	w := (*PodWorkers)(d)
	if w.timers.set(uid, w.clock.Now().Add(delay)) {
		select {
		case w.rearm <- struct{}{}:
		default:
		}
	}
}

func (d *driver) Cancel(uid types.UID) { d.timers.remove(uid) }

func (d *driver) Close(ch chan<- struct{}) { close(ch) }
