package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/cri"
)

// Issue 30's attack on the exec lane: eight pods whose exec readiness
// probes hang (timeoutSeconds 100000) hold the node's 32 exec slots, 4
// each. A new pod's exec postStart hook and exec readiness probe still
// run at once, and it becomes Ready. With slots counted alone, the hook
// waited for a slot until its own 2 min ran out, failed
// (FailedPostStartHook) and the container was killed.
func TestEightHangingPodsDoNotStarveANewPodsExecs(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	var hanging atomic.Int32
	release := make(chan struct{})
	h.Agent.Embedded().SetExecHook(func(ctx context.Context, _ string, cmd []string) error {
		if cmd[0] != "hang" {
			return nil
		}
		hanging.Add(1)
		defer hanging.Add(-1)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-release:
			return nil
		}
	})
	t.Cleanup(func() { close(release) })

	const hungPods = cri.DefaultExecPerNode / cri.DefaultExecPerPod
	for i := range hungPods {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: hung-%d\n  namespace: test\n  uid: %s\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n", i, agenttest.UID(100+i))
		for c := range cri.DefaultExecPerPod {
			fmt.Fprintf(&b, `  - name: c%d
    image: %s
    readinessProbe:
      exec:
        command: [hang]
      timeoutSeconds: 100000
      periodSeconds: 100000
`, c, agenttest.Image)
		}
		h.Write(fmt.Sprintf("hung-%d.yaml", i), b.String())
	}
	h.Eventually("the eight pods' probes to hold every exec slot", func() bool {
		return hanging.Load() == cri.DefaultExecPerNode
	})

	id := agenttest.UID(1)
	h.Write("new.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: new
  namespace: test
  uid: %s
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    lifecycle:
      postStart:
        exec:
          command: ["true"]
    readinessProbe:
      exec:
        command: ["true"]
      periodSeconds: 1
`, id, agenttest.Image))
	// Eventually's deadline (20 s) is generous: the hook and the probe run
	// at once, or wait for the hung probes' 2 min.
	h.Eventually("the new pod Ready while the eight pods' probes hang", func() bool {
		st, _ := h.Agent.StatusOf(types.UID(id))
		for _, c := range st.Conditions {
			if c.Type == v1.PodReady {
				return c.Status == v1.ConditionTrue
			}
		}
		return false
	})
	if n := hanging.Load(); n != cri.DefaultExecPerNode {
		t.Errorf("%d probes hang, want the eight pods' %d still holding their slots", n, cri.DefaultExecPerNode)
	}
	if lines := h.LogLines("FailedPostStartHook"); len(lines) > 0 {
		t.Errorf("the new pod's postStart hook failed: %v", lines)
	}
}
