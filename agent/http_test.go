package agent_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// The local endpoint: /healthz, /metrics, /pods, /lifecycle; anything
// else is 404 (/shutdown too: it is on the control socket).
func TestHTTPEndpoint(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) { c.Allocatable = agenttest.Resources("cpu=1,memory=1Gi") }))
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1), Containers: []string{"server", "sidecar"}}
	big := agenttest.PodSpec{Name: "big", UID: agenttest.UID(2), CPU: "2"}
	h.WritePod(web)
	h.WritePod(big)
	h.WaitRunning(web.UID)
	h.WaitPods("big rejected", func(pods map[types.UID]api.PodInfo) bool { return isRejected(pods[types.UID(big.UID)], "OutOfcpu") })
	h.WaitHousekeepings(1)

	// Eventually: on a loaded machine a runtime read may miss its deadline
	// (one housekeeping interval, 100 ms here) a few times in a row.
	h.Eventually(`GET /healthz is 200 "ok\n"`, func() bool {
		code, _, body := h.Get("/healthz")
		return code == http.StatusOK && body == "ok\n"
	})

	code, _, body := h.Get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, want := range []string{
		"kubelet_desired_pods", "kubelet_active_pods", "kubelet_mirror_pods", "kubelet_working_pods",
		"kubelet_pod_worker_duration_seconds",
		`kubelet_desired_pods{static="true"} 1`, `kubelet_active_pods{static="true"} 1`, "kubelet_mirror_pods 0",
		`kubelet_working_pods{config="desired",lifecycle="sync",static="true"} 1`,
		`kubelet_admission_rejections_total{reason="OutOfcpu"} 1`,
		"go_goroutines", // the default registry's collectors
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	code, contentType, body := h.Get("/lifecycle")
	if code != http.StatusOK || contentType != "application/json" {
		t.Fatalf("GET /lifecycle: %d %s", code, contentType)
	}
	var lifecycle api.Lifecycle
	if err := json.Unmarshal([]byte(body), &lifecycle); err != nil {
		t.Fatalf("/lifecycle: %v\n%s", err, body)
	}
	pods := lifecycle.Pods
	byUID := map[types.UID]api.PodInfo{}
	for _, p := range pods {
		byUID[p.UID] = p
	}
	if len(pods) != 2 {
		t.Errorf("/lifecycle: %d pods, want 2:\n%s", len(pods), body)
	}
	if p := byUID[types.UID(web.UID)]; p.Lifecycle != "Running" || p.Worker != "sync" || p.Phase != v1.PodRunning || p.Config != "desired" || len(p.Containers) != 2 || p.Name != "web-"+agenttest.NodeName {
		t.Errorf("/lifecycle web: %+v", p)
	}
	if p := byUID[types.UID(big.UID)]; p.Lifecycle != "" || p.Config != "rejected" || p.Reason != "OutOfcpu" || p.Phase != v1.PodFailed {
		t.Errorf("/lifecycle big: %+v", p)
	}

	if resp, err := agenttest.HTTPClient.Head(h.URL("/healthz")); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD /healthz: %v %v, want 200", resp, err)
	}
	for _, path := range []string{"/", "/nope", "/pods/" + web.UID, "/shutdown"} {
		if code, _, _ := h.Get(path); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
}
