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

// A sidecar's startup probe holds the regular container back until it
// succeeds, and its success gets the container started at once (a sync
// asked for by the probe's result), not at the next periodic resync (a
// minute).
func TestSidecarStartupProbeStartsTheApp(t *testing.T) {
	t.Parallel()
	var started atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !started.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()

	h := agenttest.Start(t)
	id := agenttest.UID(2)
	h.Write("sidecar.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: sidecar
  namespace: test
  uid: %s
spec:
  terminationGracePeriodSeconds: 1
  initContainers:
  - name: side
    image: %[2]s
    restartPolicy: Always
    startupProbe:
      httpGet:
        host: 127.0.0.1
        port: %[3]d
        path: /started
      periodSeconds: 1
      failureThreshold: 600
  containers:
  - name: app
    image: %[2]s
`, id, agenttest.Image, srv.Listener.Addr().(*net.TCPAddr).Port))
	appStarted := func() bool {
		st, _ := h.Agent.StatusOf(types.UID(id))
		return len(st.ContainerStatuses) == 1 && st.ContainerStatuses[0].State.Running != nil
	}
	h.Eventually("the startup probe failed", func() bool { return len(h.LogLines("Startup probe failed")) >= 2 })
	if appStarted() {
		t.Fatal("the app runs before the sidecar's startup probe succeeded")
	}
	started.Store(true)
	h.Eventually("the app running", appStarted)
}
