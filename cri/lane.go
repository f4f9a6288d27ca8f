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

// sharedLane bounds calls per key (a pod) and in all, fairly. A call
// runs at once while its key holds fewer than perKey slots and either the
// node has a free slot or its key holds less than its fair share (the
// node's slots divided among the keys that hold or wait for one, at least
// one each). So a few keys whose calls hang (exec probes with a long
// timeout) fill the node's slots only until another key comes: its first
// calls still run, and only the keys at or over their share wait. The
// runtime sees at most node slots plus, beyond them, the fair shares of
// the keys under theirs (together at most the node's slots, or one a key
// past that many keys).
type sharedLane struct {
	perKey, node int // < 1: no limit

	mu   sync.Mutex
	held int
	keys map[string]*keyShare
	// changed is closed, and replaced, whenever a slot is released or a
	// key leaves: the waiters look again.
	changed chan struct{}
}

// keyShare is one key's slots held and how many calls hold or wait for
// them, so that an idle key is forgotten.
type keyShare struct {
	held, users int
}

func newSharedLane(perKey, node int) *sharedLane {
	return &sharedLane{perKey: perKey, node: node, keys: map[string]*keyShare{}, changed: make(chan struct{})}
}

// newLane is a lane of n slots; n < 1 is no limit.
func newLane(n int) lane {
	if n < 1 {
		return nil
	}
	return make(lane, n)
}

// fairShare is each key's share of the node's slots (under mu).
func (s *sharedLane) fairShare() int { return max(1, s.node/max(1, len(s.keys))) }

// admits reports whether a call of share may take a slot now (under mu).
func (s *sharedLane) admits(share *keyShare) bool {
	if s.perKey > 0 && share.held >= s.perKey {
		return false
	}
	return s.node < 1 || s.held < s.node || share.held < s.fairShare()
}

// acquire takes a slot for key once admits says so, or fails when ctx
// ends first.
func (s *sharedLane) acquire(ctx context.Context, key string) (release func(), err error) {
	s.mu.Lock()
	share := s.keys[key]
	if share == nil {
		share = &keyShare{}
		s.keys[key] = share
	}
	share.users++
	for !s.admits(share) {
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			s.mu.Lock()
			s.leaveLocked(key, share)
			s.mu.Unlock()
			return nil, ctx.Err()
		}
		s.mu.Lock()
	}
	share.held++
	s.held++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		share.held--
		s.held--
		s.leaveLocked(key, share)
	}, nil
}

// leaveLocked ends one user of key's share and wakes the waiters: a slot
// or a key's share of the node may have come free.
func (s *sharedLane) leaveLocked(key string, share *keyShare) {
	if share.users--; share.users == 0 {
		delete(s.keys, key)
	}
	close(s.changed)
	s.changed = make(chan struct{})
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
