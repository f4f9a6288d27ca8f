package worker

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
)

// TestRunnersNeverQueueBehindABlockedSync queues, in one step, the loops
// of pods whose SyncPod blocks (more than there are parked runners) and
// then one more pod's: the last pod's SyncPod runs while every other call
// is still blocked, and every pod's loop ends once they are released. The
// pods are queued before any runner takes one, so the runner that takes a
// blocked pod leaves the others in the queue: without a runner woken or
// started whenever the last awake one leaves for a sync call, the last pod
// would wait for a blocked call to return.
func TestRunnersNeverQueueBehindABlockedSync(t *testing.T) {
	for _, blocked := range []int{1, maxParked, 3 * maxParked} {
		t.Run(fmt.Sprintf("blocked=%d", blocked), func(t *testing.T) {
			e := start(t, Options{})
			var gates []*gate
			for i := range blocked {
				gates = append(gates, e.hold(types.UID(fmt.Sprintf("b%d", i)), "SyncPod", outcome{}))
			}
			entered := e.syncer.entered("last", "SyncPod")
			e.locked(func(c *Core) {
				for i := range blocked {
					name := fmt.Sprintf("b%d", i)
					e.coreUpdate(c, createOp(newPod(name, name, false)))
				}
				e.coreUpdate(c, createOp(newPod("last", "last", false)))
			})
			<-entered
			for _, g := range gates {
				g.wait()
				g.release()
			}
			e.settle()
			for i := range blocked {
				e.wantState(types.UID(fmt.Sprintf("b%d", i)), fsm.Running)
			}
			e.wantFns("last", "SyncPod")
		})
	}
}

// TestIdleEngineKeepsFewRunners: after a burst of pods whose syncs all ran,
// the engine keeps at most maxParked runners, however many pods it holds,
// and Stop ends them (start's cleanup checks that no goroutine is left).
func TestIdleEngineKeepsFewRunners(t *testing.T) {
	e := start(t, Options{})
	const pods = 200
	for i := range pods {
		name := fmt.Sprintf("p%d", i)
		e.send(createOp(newPod(name, name, false)))
	}
	e.settle()
	e.w.mu.Lock()
	alive, parked, awake, queued := e.w.run.alive, e.w.run.parked, e.w.run.awake, len(e.w.run.queue)-e.w.run.head
	e.w.mu.Unlock()
	// A runner that ended its last loop may not have parked yet: it is
	// awake until it finds the queue empty.
	if alive > maxParked+awake || parked > maxParked || queued != 0 || alive != parked+awake {
		t.Fatalf("idle engine with %d pods: %d runners alive (%d parked, %d awake), %d pods queued; want at most %d parked and none queued",
			pods, alive, parked, awake, queued, maxParked)
	}
	for i := range pods {
		e.wantState(types.UID(fmt.Sprintf("p%d", i)), fsm.Running)
	}
}
