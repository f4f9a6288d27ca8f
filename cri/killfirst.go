package cri

import (
	"context"
	"sync"
	"time"
)

// killFirst gives kills the runtime's attention before cleanup. A
// sandbox stop tears down the pod's network (CNI plugins) and its pause
// process: work of the runtime's that competes for the node's CPU with
// the runc execs of preStop hooks and the signals of container stops. A
// kill is a process that must get its signal in time; a sandbox stop is
// cleanup after a pod's containers are gone, which can wait a moment. So
// while any kill call is in flight, sandbox stops run one at a time; when
// the last kill call returns, those waiting run at once (in their lane's
// slots). Cleanup never stops: one runs at every moment kills do. And a
// sandbox stop yields for maxYield at most: past it, it runs whatever the
// kills do, so that one kill that takes all day (a day-long grace period,
// a preStop hook that sleeps) does not keep every sandbox stop serialised
// all day.
type killFirst struct {
	maxYield time.Duration

	mu sync.Mutex
	// kills is the number of kill-lane calls in flight; drained is closed
	// when it falls to 0, and replaced when it rises from 0.
	kills   int
	drained chan struct{}
	// cleanup is the one slot a sandbox stop takes while kills > 0.
	cleanup lane
}

// newKillFirst is a killFirst whose sandbox stops yield for maxYield at
// most.
func newKillFirst(maxYield time.Duration) *killFirst {
	drained := make(chan struct{})
	close(drained)
	return &killFirst{maxYield: maxYield, drained: drained, cleanup: newLane(1)}
}

// enterKill counts a kill call in flight until its release.
func (k *killFirst) enterKill(context.Context) (release func(), err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kills == 0 {
		k.drained = make(chan struct{})
	}
	k.kills++
	return func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.kills--; k.kills == 0 {
			close(k.drained)
		}
	}, nil
}

// acquireCleanup returns at once while no kill is in flight, else once
// the cleanup slot is free, the kills have drained or it yielded for
// maxYield (or ctx ends).
func (k *killFirst) acquireCleanup(ctx context.Context) (release func(), err error) {
	yielded := time.NewTimer(k.maxYield)
	defer yielded.Stop()
	for {
		k.mu.Lock()
		kills, drained := k.kills, k.drained
		k.mu.Unlock()
		if kills == 0 {
			return func() {}, nil
		}
		select {
		case k.cleanup <- struct{}{}:
			return func() { <-k.cleanup }, nil
		case <-drained:
		case <-yielded.C:
			return func() {}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// then is the acquisition of first and then second, released in reverse.
func then(first, second func(context.Context) (func(), error)) func(context.Context) (func(), error) {
	return func(ctx context.Context) (func(), error) {
		releaseFirst, err := first(ctx)
		if err != nil {
			return nil, err
		}
		releaseSecond, err := second(ctx)
		if err != nil {
			releaseFirst()
			return nil, err
		}
		return func() {
			releaseSecond()
			releaseFirst()
		}, nil
	}
}
