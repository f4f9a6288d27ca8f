package kuberuntime

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// restartBackoff is the kubelet's crash-loop back-off: a container that
// exited may restart once its current delay has passed since the exit; each
// restart doubles the delay up to a cap, and a quiet period of twice the cap
// starts it over.
type restartBackoff struct {
	clock        clock.PassiveClock
	initial, max time.Duration

	mu sync.Mutex
	// entries is keyed by pod UID, then container name; forget drops a
	// pod's entries so a finished pod leaves nothing behind.
	entries map[types.UID]map[string]*backoffEntry
}

type backoffEntry struct {
	delay time.Duration
	// lastExit is the exit the delay was last raised for.
	lastExit time.Time
}

func newRestartBackoff(clk clock.PassiveClock, initial, max time.Duration) *restartBackoff {
	return &restartBackoff{clock: clk, initial: initial, max: max, entries: map[types.UID]map[string]*backoffEntry{}}
}

// restart decides on restarting container name, which exited at exitedAt:
// it returns how long it must still wait, or 0 and counts the restart.
func (b *restartBackoff) restart(uid types.UID, name string, exitedAt time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	pod := b.entries[uid]
	if pod == nil {
		pod = map[string]*backoffEntry{}
		b.entries[uid] = pod
	}
	e := pod[name]
	if e != nil && exitedAt.Sub(e.lastExit) > 2*b.max {
		// A quiet period: the back-off starts over, before any wait (as
		// the kubelet's, which checks expiry first).
		e = nil
	}
	if e == nil {
		pod[name] = &backoffEntry{delay: b.initial, lastExit: exitedAt}
		return 0
	}
	if wait := e.delay - b.clock.Since(exitedAt); wait > 0 {
		return wait
	}
	e.delay = min(2*e.delay, b.max)
	e.lastExit = exitedAt
	return 0
}

// wait is how long container name, which exited at exitedAt, must still
// wait for its restart; unlike restart, it counts nothing: the plan asks,
// the apply counts.
func (b *restartBackoff) wait(uid types.UID, name string, exitedAt time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[uid][name]
	if e == nil || exitedAt.Sub(e.lastExit) > 2*b.max {
		return 0
	}
	return max(e.delay-b.clock.Since(exitedAt), 0)
}

// forget drops the pod's back-off state.
func (b *restartBackoff) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, uid)
}
