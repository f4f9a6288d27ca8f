package podstatus

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
)

// The retry policy of failed syncs: per pod, an exponential back-off from
// retryBase to retryMax; overall, a token bucket of retryQPS (retryBurst at
// once), so an API server coming back is not flooded.
const (
	retryBase  = 200 * time.Millisecond
	retryMax   = 30 * time.Second
	retryQPS   = 10
	retryBurst = 100
)

// recheckInterval is how soon a pod is synced again while it waits on the
// engine (a terminal phase held back while containers may run, a deletion
// while the runtime is not yet removed): the engine does not say when that
// changes.
const recheckInterval = time.Second

// Run writes recorded statuses to the API server until ctx ends: at once
// for every status recorded, and every sync period for all. Without a
// Client it returns at once. Call it once.
func (m *Manager) Run(ctx context.Context) {
	if m.client == nil {
		return
	}
	limiter := workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[types.UID](retryBase, retryMax),
		&workqueue.TypedBucketRateLimiter[types.UID]{Limiter: rate.NewLimiter(retryQPS, retryBurst)},
	)
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
		workqueue.TypedRateLimitingQueueConfig[types.UID]{Clock: m.clock})
	m.mu.Lock()
	m.queue = queue
	m.mu.Unlock()
	m.enqueueAll()

	var wg sync.WaitGroup
	wg.Go(func() { m.work(ctx, queue) })
	defer func() {
		m.mu.Lock()
		m.queue = nil
		m.mu.Unlock()
		queue.ShutDown()
		wg.Wait()
	}()

	ticker := m.clock.NewTicker(m.syncPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			m.enqueueAll()
		}
	}
}

// work syncs queued pods one at a time, as the kubelet's status manager
// does: a failed sync is retried with back-off, a pod waiting on the
// engine is re-checked soon.
func (m *Manager) work(ctx context.Context, queue workqueue.TypedRateLimitingInterface[types.UID]) {
	for {
		uid, shutdown := queue.Get()
		if shutdown {
			return
		}
		recheck, err := m.syncPod(ctx, uid)
		switch {
		case err != nil:
			m.metrics.syncs.WithLabelValues(resultFailed).Inc()
			m.log.Warn("pod status sync failed; retrying", "uid", uid, "retries", queue.NumRequeues(uid), "err", err)
			queue.AddRateLimited(uid)
		case recheck:
			queue.Forget(uid)
			queue.AddAfter(uid, recheckInterval)
		default:
			queue.Forget(uid)
		}
		queue.Done(uid)
	}
}

// Flush syncs every recorded pod once, now, and returns the errors: for an
// agent about to exit after a node shutdown, whose pods' last statuses
// must reach the API server first. Call it after Run returned.
func (m *Manager) Flush(ctx context.Context) error {
	if m.client == nil {
		return nil
	}
	m.mu.Lock()
	uids := slices.Collect(maps.Keys(m.entries))
	m.mu.Unlock()
	var errs []error
	for _, uid := range uids {
		if _, err := m.syncPod(ctx, uid); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
