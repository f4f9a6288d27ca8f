package worker

import (
	"context"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/kubetypes"
)

// Benchmarks of the live engine (PodWorkers with the real clock and default
// Options) against a syncer that does nothing, so every figure is the
// engine's own cost: the Core, the fsm machine, the goroutine shell and
// the runtime work they cause (goroutine spawns, lock hand-offs, GC).
//
//	go test -run XXX -bench . -benchmem -count 5 ./worker
//
// Targets (issue): lifecycle < 2 µs and < 30 allocs per pod at 10,000
// pods; UpdatePod < 150 ns; kill-to-terminated p99 < 5 µs; idle pod < 1 KiB.

// benchNopSyncer is a PodSyncer whose every call succeeds at once.
type benchNopSyncer struct{}

func (benchNopSyncer) SyncPod(context.Context, UpdateType, *v1.Pod, *v1.Pod, *PodStatus) (bool, error) {
	return false, nil
}

func (benchNopSyncer) SyncTerminatingPod(context.Context, *v1.Pod, *PodStatus, *int64, func(*v1.PodStatus)) error {
	return nil
}

func (benchNopSyncer) SyncTerminatingRuntimePod(context.Context, *RunningPod) error { return nil }

func (benchNopSyncer) SyncTerminatedPod(context.Context, *v1.Pod, *PodStatus) error { return nil }

// benchPods returns n apiserver pods (config source "api", so not static and
// not serialised on a full name), each with a unique UUID-shaped UID and
// name, namespace "default" and a 30 s terminationGracePeriodSeconds. The
// prefix keeps the UIDs of different benchmarks apart.
func benchPods(prefix string, n int) []*v1.Pod {
	h := fnv.New32a()
	h.Write([]byte(prefix))
	tag := h.Sum32()
	pods := make([]*v1.Pod, n)
	for i := range pods {
		grace := int64(30)
		pods[i] = &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				UID:         types.UID(fmt.Sprintf("%08x-%04x-4000-8000-%012x", tag, i>>16&0xffff, i)),
				Name:        fmt.Sprintf("%s-%d", prefix, i),
				Namespace:   "default",
				Annotations: map[string]string{kubetypes.ConfigSourceAnnotation: "api"},
			},
			Spec: v1.PodSpec{TerminationGracePeriodSeconds: &grace},
		}
	}
	return pods
}

// benchWantState fails unless every pod is in state want.
func benchWantState(b *testing.B, w *PodWorkers, pods []*v1.Pod, want fsm.State) {
	b.Helper()
	for _, p := range pods {
		if got, _ := w.State(p.UID); got != want {
			b.Fatalf("pod %s is %s, want %s", p.UID, got, want)
		}
	}
}

// benchCreate sends a create for every pod and waits until every worker
// loop ended: each pod is Running with its SyncPod returned.
func benchCreate(b *testing.B, w *PodWorkers, pods []*v1.Pod) {
	for _, p := range pods {
		if err := w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: p}); err != nil {
			b.Fatal(err)
		}
	}
	w.waitIdle()
}

// benchKillAndRemove kills every pod, waits until every one finished
// (SyncTerminatingPod and SyncTerminatedPod returned) and removes the
// records with SyncKnownPods(nil).
func benchKillAndRemove(b *testing.B, w *PodWorkers, pods []*v1.Pod) {
	for _, p := range pods {
		if err := w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodKill, Pod: p}); err != nil {
			b.Fatal(err)
		}
	}
	w.waitIdle()
	if left := w.SyncKnownPods(nil); len(left) != 0 {
		b.Fatalf("SyncKnownPods kept %d records", len(left))
	}
}

// benchCheckedLifecycle is one lifecycle of every pod with its states
// checked at each step (untimed warm-up and sanity check).
func benchCheckedLifecycle(b *testing.B, w *PodWorkers, pods []*v1.Pod) {
	b.Helper()
	benchCreate(b, w, pods)
	benchWantState(b, w, pods, fsm.Running)
	if w.core.machine.Len() != len(pods) {
		b.Fatalf("%d records, want %d", w.core.machine.Len(), len(pods))
	}
	for _, p := range pods[:1] {
		if r, _ := w.core.machine.Get(p.UID); r.Vars.Static || r.Vars.InFlight != fsm.InFlightNone || r.Vars.Pending != fsm.PendingNone {
			b.Fatalf("pod %s: unexpected record %+v", p.UID, r)
		}
	}
	for _, p := range pods {
		if err := w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodKill, Pod: p}); err != nil {
			b.Fatal(err)
		}
	}
	w.waitIdle()
	benchWantState(b, w, pods, fsm.Finished)
	if left := w.SyncKnownPods(nil); len(left) != 0 {
		b.Fatalf("SyncKnownPods kept %d records", len(left))
	}
	benchWantState(b, w, pods, fsm.Absent)
}

// BenchmarkLifecycle runs, per iteration, the whole life of N pods: create
// all, wait until all are Running and idle, kill all, wait until all
// finished, remove them with SyncKnownPods(nil). The per-pod figures
// (ns/pod, allocs/pod, B/pod) are the ones to read; ns/op is suppressed,
// and the B/op and allocs/op that -benchmem prints are per N pods.
// Allocations are counted over the whole timed loop, every goroutine
// included (the worker loops and the timer goroutine).
func BenchmarkLifecycle(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			pods := benchPods(fmt.Sprintf("lifecycle%d", n), n)
			w := New(benchNopSyncer{}, Options{})
			defer w.Stop()
			// Warm-up: checks the states, and grows the engine's maps and
			// the runtime's goroutine pool to the size of N pods.
			benchCheckedLifecycle(b, w, pods)

			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for range b.N {
				benchCreate(b, w, pods)
				benchKillAndRemove(b, w, pods)
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)

			perPod := float64(b.N) * float64(n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perPod, "ns/pod")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/perPod, "allocs/pod")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/perPod, "B/pod")
			b.ReportMetric(0, "ns/op") // per N pods: suppressed in favour of ns/pod
		})
	}
}

// BenchmarkUpdatePodIdleRunning is one UpdatePod(update) of a Running pod
// whose worker is idle, so the call queues the update and starts the
// pod's worker loop. Every K calls the workers drain outside the timer, so
// every measured call finds its pod idle. The worker loops the calls start
// run concurrently on the other core; their allocations during the timed
// window are counted too (all goroutines are).
func BenchmarkUpdatePodIdleRunning(b *testing.B) {
	const k = 1024
	pods := benchPods("updatepod", k)
	w := New(benchNopSyncer{}, Options{})
	defer w.Stop()
	benchCreate(b, w, pods)
	benchWantState(b, w, pods, fsm.Running)

	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i > 0 && i%k == 0 {
			b.StopTimer()
			w.waitIdle()
			b.StartTimer()
		}
		if err := w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodUpdate, Pod: pods[i%k]}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	w.waitIdle()
	benchWantState(b, w, pods, fsm.Running)
}

// BenchmarkKillToTerminated kills Running, idle pods one at a time with
// KillPod, which blocks until the kill's CompletedCh closes (the pod's
// SyncTerminatingPod returned); its context is context.Background, so the
// caller's goroutine runs the pod's loop (see KillPod). One op is one KillPod; each latency is
// sampled with time.Now and p50/p99 are reported in ns. Kills follow each
// other at once, so the previous pod's SyncTerminatedPod may still run on
// the other core, as in a kubelet. Every K kills the pods are removed and
// created again outside the timer.
func BenchmarkKillToTerminated(b *testing.B) {
	const k = 1000
	pods := benchPods("kill", k)
	w := New(benchNopSyncer{}, Options{})
	defer w.Stop()
	refill := func() {
		w.waitIdle()
		if left := w.SyncKnownPods(nil); len(left) != 0 {
			b.Fatalf("SyncKnownPods kept %d records", len(left))
		}
		benchCreate(b, w, pods)
	}
	ctx := context.Background()

	// Sanity check: KillPod returns once the pod is terminated.
	refill()
	benchWantState(b, w, pods, fsm.Running)
	if err := w.KillPod(ctx, pods[0], false, nil, nil); err != nil {
		b.Fatal(err)
	}
	if s, _ := w.State(pods[0].UID); !s.IsTerminated() {
		b.Fatalf("KillPod returned with the pod %s", s)
	}
	for _, p := range pods[1:] {
		if err := w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodKill, Pod: p}); err != nil {
			b.Fatal(err)
		}
	}
	refill()

	samples := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i > 0 && i%k == 0 {
			b.StopTimer()
			refill()
			b.StartTimer()
		}
		start := time.Now()
		if err := w.KillPod(ctx, pods[i%k], false, nil, nil); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	w.waitIdle()

	slices.Sort(samples)
	b.ReportMetric(float64(benchPercentile(samples, 50).Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(benchPercentile(samples, 99).Nanoseconds()), "p99-ns")
}

// benchPercentile is the nearest-rank percentile of sorted samples.
func benchPercentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n), 1-based
	return sorted[max(rank, 1)-1]
}

// benchIdleCost is what one idle-pod measurement found, per pod.
type benchIdleCost struct {
	heap, stack, goroutines float64
}

// benchIdleCycle makes a fresh engine, brings n pods to Running and idle,
// and measures the growth of the live heap (HeapAlloc after a GC), of the
// goroutine stacks (StackInuse) and of the goroutine count; then it tears
// everything down. The pod objects exist before the first snapshot: they
// are the caller's, not the engine's.
func benchIdleCycle(b *testing.B, pods []*v1.Pod) benchIdleCost {
	var before, after runtime.MemStats
	w := New(benchNopSyncer{}, Options{})
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()

	benchCreate(b, w, pods)

	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	g1 := runtime.NumGoroutine()
	benchWantState(b, w, pods, fsm.Running)

	benchKillAndRemove(b, w, pods)
	w.Stop()

	n := float64(len(pods))
	return benchIdleCost{
		heap:       (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / n,
		stack:      (float64(after.StackInuse) - float64(before.StackInuse)) / n,
		goroutines: float64(g1 - g0),
	}
}

// BenchmarkIdlePodMemory is the memory an idle Running pod costs the
// engine, at 10,000 pods: heap-B/pod, stack-B/pod and their sum total-B/pod,
// and goroutines, the goroutine count delta (an idle pod owns none). One
// untimed cycle runs first so that the runtime's pool of dead goroutine
// structs, which is never freed, already covers 10,000 concurrent worker
// loops; the figures are the steady state, not that one-off cost.
func BenchmarkIdlePodMemory(b *testing.B) {
	const n = 10000
	pods := benchPods("idle", n)
	benchIdleCycle(b, pods)

	var sum benchIdleCost
	b.ResetTimer()
	for range b.N {
		c := benchIdleCycle(b, pods)
		sum.heap += c.heap
		sum.stack += c.stack
		sum.goroutines += c.goroutines
	}
	b.StopTimer()
	N := float64(b.N)
	b.ReportMetric(sum.heap/N, "heap-B/pod")
	b.ReportMetric(sum.stack/N, "stack-B/pod")
	b.ReportMetric((sum.heap+sum.stack)/N, "total-B/pod")
	b.ReportMetric(sum.goroutines/N, "goroutines")
	b.ReportMetric(0, "ns/op") // the time of a whole measurement cycle means nothing
}
