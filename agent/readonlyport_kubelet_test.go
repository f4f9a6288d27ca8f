package agent_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/agent/kubeletserver"
)

// The read-only port as the kubelet's: readOnlyPort on address, which
// /configz reports, serves what the node e2e suite reads there
// (http://<configz address>:<readOnlyPort>/stats/summary, the address
// being 0.0.0.0 in its Host), the other unauthenticated figures, and
// reads only. The kubelet's form logs no deprecation; podlife's former
// host:port address still works, with a warning that says what to write.
func TestReadOnlyPortAsTheKubelets(t *testing.T) {
	t.Parallel()
	readOnly := freePort(t)
	h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) {
		c.Address, c.ReadOnlyPort = "127.0.0.1", readOnly
		c.Port, c.AnonymousAuth, c.AuthorizationMode = freePort(t), true, kubeletserver.ModeAlwaysAllow
	}))
	if lines := h.LogLines("deprecated"); len(lines) != 0 {
		t.Errorf("the kubelet's address and readOnlyPort logged %q", lines)
	}
	want := net.JoinHostPort("127.0.0.1", strconv.Itoa(readOnly))
	if got := h.Agent.Addr(); got != want {
		t.Fatalf("read-only port on %q, want %q", got, want)
	}

	// Where the suite finds it: /configz of the kubelet API.
	tlsClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed
	defer tlsClient.CloseIdleConnections()
	resp, err := tlsClient.Get("https://" + h.Agent.KubeletAPIAddr() + "/configz")
	if err != nil {
		t.Fatal(err)
	}
	var configz struct {
		C kubeletconfigv1beta1.KubeletConfiguration `json:"kubeletconfig"`
	}
	err = json.NewDecoder(resp.Body).Decode(&configz)
	resp.Body.Close()
	if err != nil || configz.C.Address != "127.0.0.1" || configz.C.ReadOnlyPort != int32(readOnly) {
		t.Fatalf("/configz: address %q readOnlyPort %d (%v), want 127.0.0.1 and %d", configz.C.Address, configz.C.ReadOnlyPort, err, readOnly)
	}
	url := "http://" + net.JoinHostPort(configz.C.Address, strconv.Itoa(int(configz.C.ReadOnlyPort)))

	client := &http.Client{}
	defer client.CloseIdleConnections()
	do := func(method, path, host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, nil)
		if host != "" {
			req.Host = host
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	deadline := time.Now().Add(agenttest.WaitTimeout)
	for code, body := do("GET", "/healthz", ""); code != 200; code, body = do("GET", "/healthz", "") {
		if time.Now().After(deadline) {
			t.Fatalf("GET /healthz: %d %q", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The suite's request names the unspecified address as its host.
	code, body := do("GET", "/stats/summary", net.JoinHostPort("0.0.0.0", strconv.Itoa(readOnly)))
	var summary statsv1alpha1.Summary
	if code != 200 || json.Unmarshal([]byte(body), &summary) != nil || summary.Node.NodeName != agenttest.NodeName {
		t.Errorf("GET /stats/summary with Host 0.0.0.0: %d %.300q, want 200 and the node %s's summary", code, body, agenttest.NodeName)
	}
	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/stats/summary?only_cpu_and_memory=true", 200, `"nodeName":"` + agenttest.NodeName + `"`},
		{"GET", "/metrics/resource", 200, "node_cpu_usage_seconds_total"},
		{"GET", "/metrics/probes", 200, ""},
		// No cAdvisor: refused with its reason as an exposition comment.
		{"GET", "/metrics/cadvisor", http.StatusNotFound, "# /metrics/cadvisor: podlife has no cAdvisor"},
		{"GET", "/metrics", 200, "# HELP"},
		{"GET", "/pods", 200, `"kind": "PodList"`},
		{"HEAD", "/stats/summary", 200, ""},
		{"POST", "/stats/summary", http.StatusMethodNotAllowed, "read-only"},
		{"GET", "/containerLogs/test/web/app", http.StatusForbidden, "control socket"},
	} {
		if code, body := do(tc.method, tc.path, "node1.example"); code != tc.code || !strings.Contains(body, tc.body) {
			t.Errorf("%s %s: %d %.300q, want %d with %q", tc.method, tc.path, code, body, tc.code, tc.body)
		}
	}

	// podlife's former form: address host:port, the read-only endpoint.
	old := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) { c.Address = "127.0.0.1:0" }))
	if old.Agent.Addr() == "" {
		t.Error("the deprecated host:port address opened no read-only endpoint")
	}
	if lines := old.LogLines("level=WARN", `address \"127.0.0.1:0\" (--address) as host:port of the read-only endpoint is deprecated`,
		`write address \"127.0.0.1\" (--address) and readOnlyPort 0 (--read-only-port)`); len(lines) != 1 {
		t.Errorf("the deprecated address's warnings: %q, want one", lines)
	}
}
