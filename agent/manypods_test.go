package agent_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// Many pods removed at once, with short intervals, all stop and are
// removed: the CRI calls queue in the agent (cri.Limit) while the poll and
// housekeeping keep reading the runtime. PODLIFE_MANY_PODS sets the number
// of pods (default 300; the case is 3000); the peak goroutine
// count and the time to drain are logged.
func TestManyPodsRemovedAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("many pods: not in -short")
	}
	n := 300
	if s := os.Getenv("PODLIFE_MANY_PODS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("PODLIFE_MANY_PODS=%q: %v", s, err)
		}
	}
	h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) {
		c.Allocatable, c.MaxPods = agenttest.Resources("cpu=10000,memory=10000Gi"), n
		// Cluster DNS, so that no pod warns of its absence (MissingClusterDNS).
		c.ClusterDNS, c.ClusterDomain = []string{"10.96.0.10"}, "cluster.local"
	}))
	specs := make([]agenttest.PodSpec, n)
	for i := range specs {
		specs[i] = agenttest.PodSpec{Name: "p" + strconv.Itoa(i), UID: agenttest.UID(i + 1)}
		h.WritePod(specs[i])
	}
	drain := func(what string, done func(pods map[types.UID]api.PodInfo) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Minute) // only so a broken run ends
		for !done(h.Pods()) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting until %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	drain("every pod runs", func(pods map[types.UID]api.PodInfo) bool {
		for _, p := range specs {
			if !agenttest.IsRunning(pods[types.UID(p.UID)]) {
				return false
			}
		}
		return true
	})
	running := runtime.NumGoroutine()

	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak.Store(max(peak.Load(), int64(runtime.NumGoroutine())))
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	began := time.Now()
	for _, p := range specs {
		h.Remove(p.File())
	}
	drain("every pod is gone", func(pods map[types.UID]api.PodInfo) bool { return len(pods) == 0 })
	forgotten := time.Since(began)
	drain("the runtime holds nothing of them", func(map[types.UID]api.PodInfo) bool {
		sbs, err := h.RT.ListPodSandbox(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(sbs) == 0
	})
	close(stop)
	<-sampled
	if cs, err := h.RT.ListContainers(context.Background(), nil); err != nil || len(cs) != 0 {
		t.Errorf("containers left: %d, %v", len(cs), err)
	}
	// A housekeeping read may outlast its interval under this load (it is
	// retried at the next); nothing else may fail.
	slowReads := len(h.LogLines("level=WARN", "runtime cache refresh failed"))
	if lines := h.LogLines("level=WARN"); len(lines) > slowReads {
		t.Errorf("%d warnings besides slow housekeeping reads:\n%s", len(lines)-slowReads, strings.Join(lines, "\n"))
	}
	t.Logf("%d pods removed at once: forgotten in %s, removed from the runtime in %s; goroutines %d while they ran, peak %d while they stopped; %d housekeeping reads outlasted their interval",
		n, forgotten.Round(time.Millisecond), time.Since(began).Round(time.Millisecond), running, peak.Load(), slowReads)
}
