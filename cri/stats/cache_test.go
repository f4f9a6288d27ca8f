package stats

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

// slowStats is the fake node's runtime whose ListContainerStats waits
// until release is closed, counting the calls and the most in flight.
type slowStats struct {
	cri.Runtime
	entered            chan struct{}
	release            chan struct{}
	calls, in, maxSeen atomic.Int32
}

func (s *slowStats) ListContainerStats(ctx context.Context, f *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error) {
	s.calls.Add(1)
	n := s.in.Add(1)
	defer s.in.Add(-1)
	for {
		seen := s.maxSeen.Load()
		if n <= seen || s.maxSeen.CompareAndSwap(seen, n) {
			break
		}
	}
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-s.release
	return s.Runtime.ListContainerStats(ctx, f)
}

// Summaries and resource scrapes asked at once make one runtime refresh,
// which they share; within MaxAge they are answered from it; after, a new
// one is made. A caller that leaves does not fail the others.
func TestSamplesAreSharedAndCachedBriefly(t *testing.T) {
	n := newFakeNode(t)
	n.runPod(t, "default", "web", "w", "app")
	slow := &slowStats{Runtime: n.rt, entered: make(chan struct{}, 1), release: make(chan struct{})}
	var mu sync.Mutex
	now := t0
	p, err := New(Config{Runtime: slow, Images: n.images, NodeName: "node-a", RootDir: t.TempDir(), ProcDir: "testdata/proc",
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	if err != nil {
		t.Fatal(err)
	}
	const callers = 10
	var wg sync.WaitGroup
	var failed atomic.Int32
	leaving, leave := context.WithCancel(context.Background())
	wg.Go(func() {
		if _, err := p.Summary(leaving, false); err == nil {
			failed.Add(1) // it must leave with its context's error
		}
	})
	<-slow.entered
	for i := range callers {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				_, err = p.Summary(context.Background(), i%4 == 0)
			} else {
				_, err = p.sample(context.Background())
			}
			if err != nil {
				failed.Add(1)
			}
		})
	}
	leave()
	time.Sleep(50 * time.Millisecond) // time for the callers to ask
	close(slow.release)
	wg.Wait()
	if failed.Load() != 0 {
		t.Errorf("%d callers failed (the one that left must fail with its context, the others not)", failed.Load())
	}
	if c, m := slow.calls.Load(), slow.maxSeen.Load(); c != 1 || m != 1 {
		t.Errorf("%d callers at once made %d runtime refreshes, %d at once; want 1", callers+1, c, m)
	}
	mu.Lock()
	now = now.Add(MaxAge - time.Millisecond)
	mu.Unlock()
	if _, err := p.Summary(context.Background(), false); err != nil || slow.calls.Load() != 1 {
		t.Errorf("a summary within MaxAge: %v, %d refreshes in all; want the cached one", err, slow.calls.Load())
	}
	mu.Lock()
	now = now.Add(time.Millisecond)
	mu.Unlock()
	if _, err := p.Summary(context.Background(), false); err != nil || slow.calls.Load() != 2 {
		t.Errorf("a summary MaxAge later: %v, %d refreshes in all; want a new one", err, slow.calls.Load())
	}
}
