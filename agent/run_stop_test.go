package agent_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// TestRunReturnsAfterCancel: with a 2 ms resync (a pod's work is queued
// almost always) Run returns once its context is cancelled, whenever that
// happens: before the pods were seen, while they start, or once they run.
// Issue 10 saw Run hang in 2 of 30 such runs; a hang fails the run's wait
// ("Run did not return") with the agent's log.
func TestRunReturnsAfterCancel(t *testing.T) {
	const runs = 30
	for i := range runs {
		t.Run(fmt.Sprintf("run %d", i), func(t *testing.T) {
			h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) {
				c.SyncFrequency.Duration = 2 * time.Millisecond
				c.RuntimePollInterval.Duration = 2 * time.Millisecond
				c.FileCheckFrequency.Duration = 2 * time.Millisecond
			}), agenttest.WithSyncBackOff(2*time.Millisecond))
			for n := range 1 + rand.IntN(3) {
				h.WritePod(agenttest.PodSpec{Name: fmt.Sprintf("web%d", n), UID: agenttest.UID(n + 1)})
			}
			switch i % 3 {
			case 1: // while they start: after the first housekeeping
				h.WaitHousekeepings(1)
			case 2: // once they run
				h.WaitRunning(agenttest.UID(1))
			}
			h.Cancel()
			if err := h.Wait(); err != nil {
				t.Fatalf("Run after cancel: %v\nagent log (last lines):\n%s", err, h.Logs.Tail(60))
			}
		})
	}
}
