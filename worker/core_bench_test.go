package worker

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkCoreLifecycle drives a Core alone (no goroutine, no lock, no
// shell) through the lifecycle BenchmarkLifecycle measures on the live
// engine: create, SyncPod, kill, SyncTerminatingPod, SyncTerminatedPod and
// removal of N pods. The gap between the two is the shell's cost (the
// runners, the lock, the sync contexts and the timers).
func BenchmarkCoreLifecycle(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			pods := benchPods("core", n)
			c := NewCore(Options{ResyncInterval: time.Hour})
			var effects []Effect
			run := func() {
				effects = c.TakeEffects(effects[:0])
				for _, e := range effects {
					if e.Kind != RunLoop {
						continue
					}
					for {
						w, ok := c.Next(e.UID)
						if !ok {
							break
						}
						c.Done(w, false, nil)
					}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				for _, p := range pods {
					if err := c.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: p}, UpdateInput{}); err != nil {
						b.Fatal(err)
					}
					run()
				}
				for _, p := range pods {
					if err := c.UpdatePod(UpdatePodOptions{UpdateType: SyncPodKill, Pod: p}, UpdateInput{}); err != nil {
						b.Fatal(err)
					}
					run()
				}
				if left := c.SyncKnownPods(nil); len(left) != 0 {
					b.Fatalf("SyncKnownPods kept %d records", len(left))
				}
				effects = c.TakeEffects(effects[:0])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/pod")
		})
	}
}
