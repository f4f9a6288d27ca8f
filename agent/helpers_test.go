package agent_test

import (
	"context"
	"fmt"

	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/fsm"
)

// settle brings the agent's view of the runtime up to date and waits
// until the engine has done the syncs that caused: a test that needs a
// sync retry to wait for its back-off calls it first. Afterwards no poll
// takes a catch-up with the runtime for a change and resyncs an unchanged
// pod at once, and no sync still in flight sees a change the test makes
// next (the poll that sees the change would resync the pod again).
func settle(h *agenttest.Harness, uids ...string) {
	h.T.Helper()
	if err := h.Agent.Resync(context.Background()); err != nil {
		h.T.Fatal(err)
	}
	last := map[string]int{}
	h.Eventually(fmt.Sprintf("pods %v have no sync in flight", uids), func() bool {
		settled := true
		for _, uid := range uids {
			ts := h.Rec.Of(uid)
			var work []fsm.Transition // what housekeeping does not cause
			for _, t := range ts {
				if t.Event != fsm.SyncKnownPods {
					work = append(work, t)
				}
			}
			// Done and the next Dequeue are one step of the engine: a
			// count unchanged since the previous poll is past it.
			if len(work) == 0 || work[len(work)-1].Event != fsm.SyncPodDone || last[uid] != len(work) {
				settled = false
			}
			last[uid] = len(work)
		}
		return settled
	})
}
