package worker

import (
	"context"
	"sync"
	"time"
)

// podContext is the context of a pod's sync calls: no deadline, no values,
// done once the Core asks to cancel the pod's sync (CancelSync). It is one
// allocation where context.WithCancel(context.Background()) is two (the
// context and its CancelFunc), and two contexts are made per pod lifecycle
// (the SyncPod one, cancelled by the kill, and the terminating one). It
// implements AfterFunc, so a context a syncer derives from it
// (context.WithTimeout) registers a function with it instead of starting a
// goroutine to watch it, as it would for a context of another type.
type podContext struct {
	mu     sync.Mutex
	done   chan struct{} // made by the first Done, or closed by cancel
	err    error
	afters map[*afterFunc]struct{} // registered and neither run nor stopped
	// detached is set (under PodWorkers.mu) once the context left
	// PodWorkers.syncCtxs: the pod's next sync call gets another.
	detached bool
}

// afterFunc is one AfterFunc registration.
type afterFunc struct{ f func() }

func (c *podContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *podContext) Value(any) any               { return nil }

func (c *podContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *podContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

// cancel ends the context (context.Canceled) and runs every registered
// function, each on a goroutine of its own, as context.AfterFunc does.
func (c *podContext) cancel() {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = context.Canceled
	if c.done != nil {
		close(c.done)
	}
	afters := c.afters
	c.afters = nil
	c.mu.Unlock()
	for a := range afters {
		go a.f()
	}
}

// AfterFunc arranges for f to run on a goroutine of its own once the
// context is done (at once if it is); stop unregisters f and reports
// whether it did so before f was started (context.AfterFunc's contract).
func (c *podContext) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	a := &afterFunc{f: f}
	if c.afters == nil {
		c.afters = map[*afterFunc]struct{}{}
	}
	c.afters[a] = struct{}{}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, registered := c.afters[a]
		delete(c.afters, a)
		return registered
	}
}
