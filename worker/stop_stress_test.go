package worker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
)

// TestStopRandomWorkloads is the stress test of issue 10's Stop hang: at
// GOMAXPROCS 1, 2 and 4, random workloads (creates, updates, kills with
// shrinking grace, KillPod with background and cancellable contexts,
// SyncKnownPods, orphans, static pods sharing a full name) run from
// several goroutines against a syncer that returns, fails, reports a
// terminal phase or blocks until cancelled, with real timers firing
// (1 ms resync and back-off); Stop comes at a random point while the
// drivers go on. Stop must return, every call after it must return, no
// sync call may still run and no goroutine of the engine may survive.
// 300 runs per CPU count; -soak runs 5000 per CPU count. A hang fails the
// run by name after hangDeadline, with every record the engine holds; the
// failing seed is in the test's log.
func TestStopRandomWorkloads(t *testing.T) {
	runs := 300
	if *soak {
		runs = 5000
	}
	seed := rand.Uint64()
	t.Logf("seed %d (a run is seeded with (seed, run number))", seed)
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			ignore := goleak.IgnoreCurrent()
			for i := range runs {
				stressStopOnce(t, rand.New(rand.NewPCG(seed, uint64(i))), i)
			}
			goleak.VerifyNone(t, ignore)
		})
	}
}

// stressSyncer behaves at random on every call.
type stressSyncer struct {
	mu     sync.Mutex
	rng    *rand.Rand
	active atomic.Int64
}

func (s *stressSyncer) do(ctx context.Context) (terminal bool, err error) {
	s.active.Add(1)
	defer s.active.Add(-1)
	s.mu.Lock()
	n := s.rng.IntN(10)
	s.mu.Unlock()
	switch {
	case n < 4:
		return false, nil
	case n < 6:
		return false, errRapidSync
	case n < 7:
		return true, nil
	case n < 8:
		runtime.Gosched()
		return false, nil
	}
	<-ctx.Done()
	return false, ctx.Err()
}

func (s *stressSyncer) SyncPod(ctx context.Context, _ UpdateType, _, _ *v1.Pod, _ *PodStatus) (bool, error) {
	return s.do(ctx)
}
func (s *stressSyncer) SyncTerminatingPod(ctx context.Context, _ *v1.Pod, _ *PodStatus, _ *int64, _ func(*v1.PodStatus)) error {
	_, err := s.do(ctx)
	return err
}
func (s *stressSyncer) SyncTerminatingRuntimePod(ctx context.Context, _ *RunningPod) error {
	_, err := s.do(ctx)
	return err
}
func (s *stressSyncer) SyncTerminatedPod(ctx context.Context, _ *v1.Pod, _ *PodStatus) error {
	_, err := s.do(ctx)
	return err
}

// stressStopOnce runs one random workload and stops the engine in its
// middle.
func stressStopOnce(t *testing.T, rng *rand.Rand, run int) {
	t.Helper()
	s := &stressSyncer{rng: rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))}
	w := New(s, Options{ResyncInterval: time.Millisecond, BackOffPeriod: time.Millisecond})

	// Pods: regular ones, two static pods sharing one full name, and
	// runtime-only pods (kills without a spec).
	pods := []*v1.Pod{newPod("r1", "web", false), newPod("r2", "db", false), newPod("s1", "static", true), newPod("s2", "static", true)}
	drivers := 1 + rng.IntN(3)
	steps := 5 + rng.IntN(30)
	stopAfter := rng.IntN(drivers * steps) // total actions before Stop
	var (
		actions atomic.Int64
		stopped = make(chan struct{})
		stopOne sync.Once
		wg      sync.WaitGroup
		kills   sync.WaitGroup
		bad     = make(chan error, drivers*steps)
	)
	stop := func() {
		stopOne.Do(func() {
			w.Stop()
			close(stopped)
		})
	}
	for d := range drivers {
		drng := rand.New(rand.NewPCG(rng.Uint64(), uint64(d)))
		wg.Go(func() {
			for range steps {
				if actions.Add(1) == int64(stopAfter) {
					stop()
				}
				pod := pods[drng.IntN(len(pods))]
				var err error
				switch drng.IntN(7) {
				case 0:
					err = w.UpdatePod(createOp(pod))
				case 1:
					err = w.UpdatePod(updateOp(pod))
				case 2:
					grace := int64(drng.IntN(4))
					err = w.UpdatePod(killOp(pod, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: &grace}))
				case 3:
					err = w.UpdatePod(runtimeKillOp("o"+string(pod.UID), pod.Name, nil))
				case 4:
					var desired []*v1.Pod
					for _, p := range pods {
						if drng.IntN(2) == 0 {
							desired = append(desired, p)
						}
					}
					w.SyncKnownPods(desired)
				case 5:
					background := drng.IntN(2) == 0
					kills.Go(func() {
						ctx, cancel := context.WithCancel(context.Background())
						defer cancel()
						if !background {
							go func() {
								runtime.Gosched()
								cancel()
							}()
						}
						if err := w.KillPod(ctx, pod, false, nil, nil); err != nil &&
							!errors.Is(err, ErrStopped) && !errors.Is(err, context.Canceled) {
							bad <- fmt.Errorf("KillPod(%s) returned %v, want nil, ErrStopped or context.Canceled", pod.UID, err)
						}
					})
				default:
					runtime.Gosched()
				}
				if err != nil && !errors.Is(err, ErrStopped) {
					bad <- fmt.Errorf("UpdatePod(%s) returned %v, want nil or ErrStopped", pod.UID, err)
				}
			}
		})
	}
	within(t, fmt.Sprintf("run %d: the drivers' UpdatePod and SyncKnownPods calls", run), w, wg.Wait)
	within(t, fmt.Sprintf("run %d: Stop", run), w, stop) // the run may have had fewer actions than stopAfter
	receiveWithin(t, fmt.Sprintf("run %d: Stop's end", run), w, stopped)
	within(t, fmt.Sprintf("run %d: every KillPod's return after Stop", run), w, kills.Wait)
	close(bad)
	for err := range bad {
		t.Errorf("run %d: %v", run, err)
	}
	w.mu.Lock()
	loops := w.runningLoops
	w.mu.Unlock()
	if loops != 0 || !isClosed(w.done) || s.active.Load() != 0 {
		t.Fatalf("run %d: after Stop, %d loops run, timer goroutine ended %v, %d sync calls in progress", run, loops, isClosed(w.done), s.active.Load())
	}
	if err := w.UpdatePod(createOp(newPod("late", "late", false))); !errors.Is(err, ErrStopped) {
		t.Fatalf("run %d: UpdatePod after Stop returned %v, want ErrStopped", run, err)
	}
}
