package agent_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/internal/agenttest"
)

// A running pod past its active deadline is ended at the next
// housekeeping, not at its periodic resync (a minute): Failed, reason
// DeadlineExceeded, its container stopped.
func TestActiveDeadlineEndsThePod(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	id := agenttest.UID(3)
	h.Write("deadline.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: deadline
  namespace: test
  uid: %s
spec:
  terminationGracePeriodSeconds: 1
  activeDeadlineSeconds: 2
  containers:
  - name: app
    image: %s
`, id, agenttest.Image))
	h.Eventually("the pod Failed with reason DeadlineExceeded", func() bool {
		st, _ := h.Agent.StatusOf(types.UID(id))
		return st.Phase == v1.PodFailed && st.Reason == "DeadlineExceeded" &&
			len(st.ContainerStatuses) == 1 && st.ContainerStatuses[0].State.Terminated != nil
	})
	if len(h.LogLines("event: Pod was active on the node longer than the specified deadline")) == 0 {
		t.Error("no DeadlineExceeded event")
	}
}
