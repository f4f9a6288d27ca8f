package cri

import (
	"context"
	"sync"
)

// lane is a counting semaphore: a slot is a value in the channel. A nil
// lane has no limit.
type lane chan struct{}

// acquire takes a slot, once one is free or ctx ends, and returns its
// release.
func (l lane) acquire(ctx context.Context) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// sharedLane bounds calls per key (a pod) and in all: a call first takes a
// slot of its key's share, then one of the node's. A key whose calls hang
// holds at most its share of the node's slots; its further calls wait in
// its own share and take none of the others'.
type sharedLane struct {
	perKey int
	node   lane

	mu   sync.Mutex
	keys map[string]*keyShare
}

// keyShare is one key's slots and how many calls hold or wait for them,
// so that an idle key is forgotten.
type keyShare struct {
	slots lane
	users int
}

func newSharedLane(perKey, node int) *sharedLane {
	return &sharedLane{perKey: perKey, node: newLane(node), keys: map[string]*keyShare{}}
}

// newLane is a lane of n slots; n < 1 is no limit.
func newLane(n int) lane {
	if n < 1 {
		return nil
	}
	return make(lane, n)
}

// acquire takes a slot of key's share and one of the node's.
func (s *sharedLane) acquire(ctx context.Context, key string) (release func(), err error) {
	share := s.join(key)
	releaseKey, err := share.slots.acquire(ctx)
	if err != nil {
		s.leave(key, share)
		return nil, err
	}
	releaseNode, err := s.node.acquire(ctx)
	if err != nil {
		releaseKey()
		s.leave(key, share)
		return nil, err
	}
	return func() {
		releaseNode()
		releaseKey()
		s.leave(key, share)
	}, nil
}

func (s *sharedLane) join(key string) *keyShare {
	s.mu.Lock()
	defer s.mu.Unlock()
	share := s.keys[key]
	if share == nil {
		share = &keyShare{slots: newLane(s.perKey)}
		s.keys[key] = share
	}
	share.users++
	return share
}

func (s *sharedLane) leave(key string, share *keyShare) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if share.users--; share.users == 0 {
		delete(s.keys, key)
	}
}

// changeLane is the change lane: a counting semaphore whose waiters for a
// call on a pod that already has its sandbox (creating and starting its
// containers) go before those for a new sandbox or a removal. With 100
// pods created at once, a FIFO lane ran all 100 sandboxes before the first
// container: every pod came up at the end. Ahead, each pod's containers
// follow its sandbox, and pods come up one after another, the total time
// the same. A nil changeLane has no limit.
type changeLane struct {
	mu   sync.Mutex
	free int
	// queues[0] are the calls ahead, queues[1] the others; each FIFO.
	queues [2][]*laneWaiter
}

// laneWaiter is a call waiting for a slot of a changeLane; granted (under
// the lane's lock) once release handed it one and closed ready.
type laneWaiter struct {
	ready   chan struct{}
	granted bool
}

func newChangeLane(n int) *changeLane {
	if n < 1 {
		return nil
	}
	return &changeLane{free: n}
}

// acquire takes a slot for a new sandbox or a removal.
func (l *changeLane) acquire(ctx context.Context) (func(), error) { return l.take(ctx, 1) }

// acquireAhead takes a slot for a call on a pod whose sandbox runs,
// before any waiting acquire.
func (l *changeLane) acquireAhead(ctx context.Context) (func(), error) { return l.take(ctx, 0) }

func (l *changeLane) take(ctx context.Context, class int) (func(), error) {
	if l == nil {
		return func() {}, nil
	}
	l.mu.Lock()
	if l.free > 0 {
		// A free slot means nobody waits: release hands slots to waiters first.
		l.free--
		l.mu.Unlock()
		return l.release, nil
	}
	w := &laneWaiter{ready: make(chan struct{})}
	l.queues[class] = append(l.queues[class], w)
	l.mu.Unlock()
	select {
	case <-w.ready:
		return l.release, nil
	case <-ctx.Done():
		l.mu.Lock()
		if w.granted {
			// Handed a slot as ctx ended: pass it on.
			l.mu.Unlock()
			l.release()
			return nil, ctx.Err()
		}
		q := l.queues[class]
		for i, o := range q {
			if o == w {
				l.queues[class] = append(q[:i:i], q[i+1:]...)
				break
			}
		}
		l.mu.Unlock()
		return nil, ctx.Err()
	}
}

// release hands the slot to the first waiter ahead, else to the first
// other waiter, else frees it.
func (l *changeLane) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for class, q := range l.queues {
		if len(q) > 0 {
			w := q[0]
			q[0] = nil
			l.queues[class] = q[1:]
			w.granted = true
			close(w.ready)
			return
		}
	}
	l.free++
}

// waiting is how many calls wait for a slot, ahead and not (for tests).
func (l *changeLane) waiting() (ahead, others int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queues[0]), len(l.queues[1])
}
