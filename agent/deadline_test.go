package agent_test

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// A pod past its activeDeadlineSeconds is stopped, Failed with the
// kubelet's DeadlineExceeded, as the kubelet's activeDeadlineHandler has
// it; so is a pod whose edit (same UID) sets a deadline it is already
// past. A pod within its deadline keeps running.
func TestActiveDeadline(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	withSpec := func(p agenttest.PodSpec, lines string) string {
		return strings.Replace(p.YAML(), "spec:\n", "spec:\n"+lines, 1)
	}
	short := agenttest.PodSpec{Name: "short", UID: agenttest.UID(1)}
	long := agenttest.PodSpec{Name: "long", UID: agenttest.UID(2)}
	later := agenttest.PodSpec{Name: "later", UID: agenttest.UID(3)}
	start := time.Now()
	h.Write(short.File(), withSpec(short, "  activeDeadlineSeconds: 1\n"))
	h.Write(long.File(), withSpec(long, "  activeDeadlineSeconds: 3600\n"))
	h.WritePod(later)
	h.WaitRunning(long.UID, later.UID)

	deadlineExceeded := func(p api.PodInfo) bool {
		return p.Phase == v1.PodFailed && p.Reason == "DeadlineExceeded" &&
			p.Message == "Pod was active on the node longer than the specified deadline"
	}
	h.WaitPods("short stopped for its deadline", func(pods map[types.UID]api.PodInfo) bool {
		return deadlineExceeded(pods[types.UID(short.UID)])
	})
	if took := time.Since(start); took < time.Second {
		t.Errorf("short stopped %v after it was written, before its 1 s deadline", took)
	}
	h.Eventually("short's containers stopped", func() bool { return h.NothingRuns(short.UID) })

	// An edit keeps the UID and sets a deadline later is past already.
	h.Write(later.File(), withSpec(later, "  activeDeadlineSeconds: 1\n"))
	h.WaitPods("later stopped for its new deadline", func(pods map[types.UID]api.PodInfo) bool {
		return deadlineExceeded(pods[types.UID(later.UID)])
	})
	if p := h.Pod(long.UID); !agenttest.IsRunning(p) {
		t.Errorf("long, within its deadline: %+v", p)
	}
}
