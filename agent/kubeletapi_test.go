package agent_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/agent/kubeletserver"
)

// freePort is a TCP port free on loopback a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Standalone, the kubelet API stays off unless told how to let requests
// in: by default (Webhook, no cluster) the agent says why; with
// --anonymous-auth and AlwaysAllow it serves, and the embedded runtime's
// missing streaming server is a 501 that says so.
func TestKubeletAPIStandalone(t *testing.T) {
	t.Parallel()
	off := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) { c.Port = freePort(t) }))
	if addr := off.Agent.KubeletAPIAddr(); addr != "" {
		t.Errorf("standalone with the default Webhook authorization, the kubelet API listens on %s; want it off", addr)
	}
	if lines := off.LogLines("kubelet API off", "no cluster (--kubeconfig)"); len(lines) != 1 {
		t.Errorf("the agent does not say why the kubelet API is off: %q", lines)
	}

	h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) {
		c.Port, c.Address = freePort(t), "127.0.0.1"
		c.AnonymousAuth, c.AuthorizationMode = true, kubeletserver.ModeAlwaysAllow
	}))
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1)}
	h.WritePod(web)
	h.WaitRunning(web.UID)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed
	defer client.CloseIdleConnections()
	do := func(method, path string, upgrade bool) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "https://"+h.Agent.KubeletAPIAddr()+path, nil)
		if upgrade {
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "SPDY/3.1")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := do("GET", "/pods", false); code != 200 || !strings.Contains(body, `"name":"web-`+agenttest.NodeName+`"`) {
		t.Errorf("GET /pods: %d %.200q, want 200 and the pod", code, body)
	}
	// The agent's effective configuration, as the node e2e suite reads it.
	var configz struct {
		C kubeletconfigv1beta1.KubeletConfiguration `json:"kubeletconfig"`
	}
	if code, body := do("GET", "/configz", false); code != 200 || json.Unmarshal([]byte(body), &configz) != nil ||
		configz.C.StaticPodPath != h.Manifests || configz.C.Authorization.Mode != kubeletserver.ModeAlwaysAllow || !*configz.C.Authentication.Anonymous.Enabled {
		t.Errorf("GET /configz: %d %.300q, want 200 and the agent's static pod path %s, AlwaysAllow, anonymous", code, body, h.Manifests)
	}
	pod := "/test/web-" + agenttest.NodeName
	if code, body := do("POST", "/exec"+pod+"/app?command=sh&output=1", true); code != http.StatusNotImplemented || !strings.Contains(body, "serves no streaming") {
		t.Errorf("exec on the embedded runtime: %d %q, want 501 saying the runtime serves no streaming", code, body)
	}
	if code, body := do("POST", "/exec/test/nobody/main?command=sh&output=1", true); code != http.StatusNotFound || !strings.Contains(body, "test/nobody") {
		t.Errorf("exec in a pod the node does not run: %d %q, want 404 naming it", code, body)
	}
	if code, body := do("POST", "/exec"+pod+"/nothere?command=sh&output=1", true); code != http.StatusNotFound || !strings.Contains(body, `container "nothere"`) {
		t.Errorf("exec in a container the pod does not have: %d %q, want 404 naming it", code, body)
	}
	if code, body := do("GET", "/metrics/probes", false); code != 200 || strings.Contains(body, "go_goroutines") {
		t.Errorf("GET /metrics/probes: %d %.200q, want 200 and the probe metrics only", code, body)
	}
}
