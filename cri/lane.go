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
