package agent_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/logindtest"
)

// systemd-logind announces the node shutdown, as to the kubelet: the agent
// holds a delay inhibitor lock; PrepareForShutdown(true) stops the pods
// band by band (the critical ones last) and rejects new ones, and only then
// is the lock released, the agent running on; PrepareForShutdown(false)
// admits pods again and takes the lock again; the agent's exit releases it.
func TestNodeShutdownFromLogind(t *testing.T) {
	t.Parallel()
	bus := logindtest.StartBus(t)
	logind := logindtest.StartLogind(t, bus.Address, 0)
	h := agenttest.Start(t, withShutdown(), agenttest.WithSystemBus(bus.Address))
	low := agenttest.PodSpec{Name: "low", UID: agenttest.UID(1), Grace: 30}
	crit := agenttest.PodSpec{Name: "crit", UID: agenttest.UID(2), Grace: 30, Priority: 2000000000}
	late := agenttest.PodSpec{Name: "late", UID: agenttest.UID(3)}
	after := agenttest.PodSpec{Name: "after", UID: agenttest.UID(4)}
	h.WritePod(low)
	h.WritePod(crit)
	h.WaitRunning(low.UID, crit.UID)
	locks := logind.WaitLocks("the agent took the lock", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 1 })
	if k := locks[0]; k.What != "shutdown" || k.Mode != "delay" {
		t.Errorf("lock %+v, want a delay lock on shutdown", k)
	}
	// logind's InhibitDelayMaxSec (0) is shorter than the 4 s asked for.
	if lines := h.Logs.Lines("InhibitDelayMaxSec (0s) is shorter than the shutdown grace period (4s)"); len(lines) != 1 {
		t.Errorf("want a warning naming both durations; log:\n%s", h.Logs.Tail(50))
	}

	logind.PrepareForShutdown(true)
	logind.WaitLocks("the lock released", func(l []logindtest.Lock) bool { return l[0].Released })
	// Released only once the pods stopped.
	all := h.Rec.All()
	for _, p := range []agenttest.PodSpec{low, crit} {
		if !h.Rec.Saw(p.UID, agenttest.To(fsm.Terminated)) {
			t.Errorf("%s had not terminated when the lock was released:\n%s", p.Name, agenttest.Describe(all))
		}
	}
	if lowAt, critAt := h.Rec.First(low.UID, agenttest.To(fsm.Terminating)), h.Rec.First(crit.UID, agenttest.To(fsm.Terminating)); lowAt < 0 || lowAt > critAt {
		t.Errorf("low reached Terminating at %d, crit at %d: the low band must go first\n%s", lowAt, critAt, agenttest.Describe(all))
	}
	for _, p := range []agenttest.PodSpec{low, crit} {
		checkShutdownStatus(t, h, p)
	}
	h.WritePod(late)
	h.WaitPods("late rejected NodeShutdown", func(pods map[types.UID]api.PodInfo) bool {
		return isRejected(pods[types.UID(late.UID)], "NodeShutdown")
	})

	// The shutdown cancelled: the agent ran on, admits pods and holds a
	// new lock.
	logind.PrepareForShutdown(false)
	logind.WaitLocks("a new lock after the cancellation", func(l []logindtest.Lock) bool { return len(l) == 2 && logindtest.Held(l) == 1 })
	h.WritePod(after)
	h.WaitRunning(after.UID)

	h.Cancel()
	if err := h.Wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	logind.WaitLocks("every lock released once the agent stopped", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 0 })
}

// Without a bus the agent runs on, says so, and still shuts the node down
// when asked by hand.
func TestNoSystemBus(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t, withShutdown(), agenttest.WithSystemBus("unix:path=/nonexistent/podlife-test-bus"))
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1), Grace: 30}
	h.WritePod(web)
	h.WaitRunning(web.UID)
	h.Eventually("a warning that logind is unavailable", func() bool {
		return len(h.Logs.Lines("graceful node shutdown through systemd-logind is unavailable", "podlife shutdown")) == 1
	})
	h.Agent.RequestShutdown()
	if err := h.Wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkShutdownStatus(t, h, web)
}
