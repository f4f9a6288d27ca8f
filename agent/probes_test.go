package agent_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/internal/agenttest"
)

// The agent wires the probes on the embedded runtime: a readiness httpGet
// probe (to a server of the test, through its host field) sets the pod's
// Ready condition both ways, and a liveness tcpSocket probe whose listener
// closes gets the container restarted through the engine.
func TestProbesOnEmbeddedRuntime(t *testing.T) {
	t.Parallel()
	var healthy atomic.Bool
	healthy.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	live, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	h := agenttest.Start(t)
	id := agenttest.UID(1)
	h.Write("probed.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: probed
  namespace: test
  uid: %s
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    readinessProbe:
      httpGet:
        host: 127.0.0.1
        port: %d
        path: /ready
      periodSeconds: 1
      failureThreshold: 1
    livenessProbe:
      tcpSocket:
        host: 127.0.0.1
        port: %d
      periodSeconds: 1
      failureThreshold: 1
`, id, agenttest.Image, srv.Listener.Addr().(*net.TCPAddr).Port, live.Addr().(*net.TCPAddr).Port))
	ready := func(want v1.ConditionStatus) {
		t.Helper()
		h.Eventually(fmt.Sprintf("Ready %s", want), func() bool {
			st, _ := h.Agent.StatusOf(types.UID(id))
			for _, c := range st.Conditions {
				if c.Type == v1.PodReady {
					return c.Status == want
				}
			}
			return false
		})
	}
	ready(v1.ConditionTrue)
	healthy.Store(false)
	ready(v1.ConditionFalse)
	healthy.Store(true)
	ready(v1.ConditionTrue)

	live.Close()
	h.Eventually("the container restarted after its liveness probe failed", func() bool {
		p := h.Pod(id)
		return len(p.Containers) == 1 && p.Containers[0].Restarts >= 1
	})
	if len(h.LogLines("event: Container app failed liveness probe, will be restarted")) == 0 {
		t.Error("no Killing event for the liveness failure")
	}
}
