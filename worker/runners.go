package worker

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// The worker loops run on runners: goroutines of the engine that take the
// pods whose loop the Core asked for (RunLoop) from a FIFO queue and run
// each pod's loop until it ends. The Core asks for a pod's loop only when
// none runs, so a pod's sync calls never overlap.
//
// Why runners rather than a goroutine per loop or per pod: a goroutine
// started for every idle-to-busy pod costs a goroutine start and a hand-off
// to a new goroutine per pod (the largest share of the engine's CPU in a
// burst of updates, BenchmarkLifecycle's profile); a goroutine parked per
// pod, as the kubelet's, costs its stack per idle pod. A runner whose loop
// ended takes the next queued pod itself, so a burst is drained by the
// runners already awake, and an idle engine keeps at most maxParked
// goroutines, whatever its number of pods.
//
// No queued pod waits behind another pod's sync call. awake counts the
// runners that are neither parked nor inside a sync call (they come back
// to the queue without waiting on a syncer); whenever the queue is not
// empty, at least one runner is awake: a push that finds none awake wakes
// a parked runner or starts one, and so does a runner that leaves for a
// sync call with the queue not empty and no other runner awake.
type runners struct {
	queue []types.UID // queue[head:] are the pods waiting for a runner
	head  int
	// awake, parked, alive count the runners; wakeups are the signals sent
	// to parked runners and not yet taken (a woken runner was already
	// counted awake by its waker).
	awake, parked, alive, wakeups int
	cond                          *sync.Cond // parked runners wait on it (PodWorkers.mu)
}

// maxParked bounds the runners that wait for work between loops; a runner
// that finds the queue empty beyond it ends.
const maxParked = 4

// startLoop queues the pod's worker loop (mu held).
func (w *PodWorkers) startLoop(uid types.UID) {
	r := &w.run
	r.queue = append(r.queue, uid)
	if r.awake == 0 {
		w.wakeRunner()
	}
}

// wakeRunner makes one more runner awake (mu held): a parked one, or a new
// one.
func (w *PodWorkers) wakeRunner() {
	r := &w.run
	r.awake++
	if r.parked > 0 {
		r.parked--
		r.wakeups++
		r.cond.Signal()
		return
	}
	r.alive++
	go w.runner()
}

// leaving is called by a runner that is about to leave mu for a sync call:
// it keeps a runner awake for the queue.
func (w *PodWorkers) leaving() {
	r := &w.run
	r.awake--
	if r.awake == 0 && r.head < len(r.queue) {
		w.wakeRunner()
	}
}

// runner runs queued pods' loops until the queue is empty and enough
// runners are parked, or the engine stopped.
func (w *PodWorkers) runner() {
	r := &w.run
	scratch := make([]action, 0, 4)
	w.mu.Lock()
	defer func() {
		r.alive--
		w.idle.Broadcast() // Stop waits for every runner to end
		w.mu.Unlock()
	}()
	for {
		for r.head == len(r.queue) {
			r.queue, r.head = r.queue[:0], 0
			if w.stopped || r.parked >= maxParked {
				r.awake--
				return
			}
			r.awake--
			r.parked++
			r.cond.Wait()
			if r.wakeups > 0 {
				r.wakeups-- // counted awake by its waker
			} else { // Stop's broadcast
				r.parked--
				r.awake++
			}
		}
		uid := r.queue[r.head]
		r.queue[r.head] = ""
		r.head++
		w.runLoop(uid, nil, scratch)
	}
}
