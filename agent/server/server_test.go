package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/client"
	"github.com/podlife/podlife/agent/server"
	"github.com/podlife/podlife/cri/logs"
)

// host is a HostInterface of the test's own.
type host struct {
	registry  *prometheus.Registry
	problem   atomic.Value // string
	shutdowns atomic.Int32
	logErr    atomic.Pointer[error]
}

func (h *host) Registry() *prometheus.Registry { return h.registry }
func (h *host) HealthProblem() string          { s, _ := h.problem.Load().(string); return s }
func (h *host) PodList() *v1.PodList {
	return &v1.PodList{Items: []v1.Pod{{Status: v1.PodStatus{Phase: v1.PodRunning}}}}
}
func (h *host) Lifecycle() api.Lifecycle {
	return api.Lifecycle{Pods: []api.PodInfo{{UID: "u1", Namespace: "test", Name: "web", Config: "desired"}}}
}
func (h *host) ContainerLog(context.Context, string, string, string, bool) (*logs.ContainerLog, error) {
	return nil, *h.logErr.Load()
}
func (h *host) RequestShutdown()     { h.shutdowns.Add(1) }
func (h *host) ShutdownPlan() string { return "node shutdown started" }

// serve runs the servers of h until the test ends, with the control
// socket in a short directory (a socket path has at most 107 bytes).
func serve(t *testing.T, h *host) (*server.Server, string) {
	t.Helper()
	return serveWith(t, h, server.Config{Address: "127.0.0.1:0"})
}

// serveWith is serve with cfg (its ControlSocket is set here).
func serveWith(t *testing.T, h *host, cfg server.Config) (*server.Server, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "plsrv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := api.ControlSocket(dir)
	cfg.ControlSocket = socket
	s, err := server.Listen(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		s.Close()
		if _, err := os.Lstat(socket); !os.IsNotExist(err) {
			t.Errorf("the control socket is left after Close: %v", err)
		}
	})
	return s, socket
}

var httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

func get(t *testing.T, s *server.Server, path string) (int, string) {
	t.Helper()
	resp, err := httpClient.Get("http://" + s.Addr() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// The TCP endpoint serves what its host says, and nothing of the control
// socket's.
func TestReadOnlyEndpointServesTheHost(t *testing.T) {
	h := &host{registry: prometheus.NewRegistry()}
	s, socket := serve(t, h)

	if code, body := get(t, s, api.HealthzPath); code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET /healthz of a healthy host: %d %q", code, body)
	}
	h.problem.Store("runtime reads failing")
	if code, body := get(t, s, api.HealthzPath); code != http.StatusInternalServerError || !strings.Contains(body, "runtime reads failing") {
		t.Errorf("GET /healthz of an unhealthy host: %d %q", code, body)
	}
	code, body := get(t, s, api.LifecyclePath)
	var l api.Lifecycle
	if err := json.Unmarshal([]byte(body), &l); code != http.StatusOK || err != nil || len(l.Pods) != 1 || l.Pods[0].Name != "web" {
		t.Errorf("GET /lifecycle: %d %v %q", code, err, body)
	}
	code, body = get(t, s, api.PodsPath)
	var pods v1.PodList
	if err := json.Unmarshal([]byte(body), &pods); code != http.StatusOK || err != nil || len(pods.Items) != 1 || pods.Items[0].Status.Phase != v1.PodRunning {
		t.Errorf("GET /pods: %d %v %q", code, err, body)
	}
	if code, body := get(t, s, api.MetricsPath); code != http.StatusOK || !strings.Contains(body, "promhttp_metric_handler") {
		t.Errorf("GET /metrics: %d %q", code, body)
	}
	if code, body := get(t, s, api.ContainerLogsPath+"/test/web"); code != http.StatusForbidden || !strings.Contains(body, socket) {
		t.Errorf("GET /containerLogs on the TCP endpoint: %d %q, want 403 naming the control socket", code, body)
	}
	if code, _ := get(t, s, api.ShutdownPath); code != http.StatusNotFound {
		t.Errorf("GET /shutdown on the TCP endpoint: %d, want 404", code)
	}
	if h.shutdowns.Load() != 0 {
		t.Error("the TCP endpoint asked the host for a shutdown")
	}
}

// The control socket asks the host for a shutdown and answers with its
// plan; a log the host does not have is a 404 or a 400.
func TestControlSocketAsksTheHost(t *testing.T) {
	h := &host{registry: prometheus.NewRegistry()}
	h.logErr.Store(new(error))
	_, socket := serve(t, h)
	if fi, err := os.Stat(socket); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("control socket %s: %v, want mode 0600", socket, err)
	}
	answer, err := client.ShutdownNode(t.Context(), socket)
	if err != nil || answer != "node shutdown started\n" || h.shutdowns.Load() != 1 {
		t.Errorf("ShutdownNode: %q %v; the host was asked %d times, want once", answer, err, h.shutdowns.Load())
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{server.NotFound("pod test/web is not one of this agent's pods"), "404 Not Found: pod test/web is not one"},
		{&logs.LookupError{}, "400 Bad Request"},
		{&logs.LookupError{NotFound: true}, "404 Not Found"},
		{errors.New("runtime down"), "500 Internal Server Error: runtime down"},
	} {
		h.logErr.Store(&tc.err)
		err := client.ContainerLogs(t.Context(), socket, "test", "web", "", nil, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ContainerLogs with the host's error %v: %v, want %q", tc.err, err, tc.want)
		}
	}
	if err := client.ContainerLogs(t.Context(), socket, "test", "web", "", map[string][]string{"tailLines": {"-1"}}, io.Discard); err == nil || !strings.Contains(err.Error(), "400 Bad Request") {
		t.Errorf("ContainerLogs with a bad query: %v, want 400", err)
	}
}

// A path that cannot be a socket's fails Listen, and leaves nothing
// listening.
func TestListenFailsOnABadSocketPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), strings.Repeat("d", 120), api.ControlSocketName)
	if _, err := server.Listen(&host{registry: prometheus.NewRegistry()}, server.Config{Address: "127.0.0.1:0", ControlSocket: path}); err == nil {
		t.Fatal("Listen accepted a socket path longer than 107 bytes")
	}
}

// A keep-alive connection that sends no further request is closed by
// the server after the idle timeout, on both endpoints.
func TestIdleKeepAliveConnectionsAreClosed(t *testing.T) {
	s, socket := serveWith(t, &host{registry: prometheus.NewRegistry()}, server.Config{Address: "127.0.0.1:0", IdleTimeout: 100 * time.Millisecond})
	for _, tc := range []struct{ name, network, addr, host, path string }{
		{"read-only endpoint", "tcp", s.Addr(), s.Addr(), api.HealthzPath},
		{"control socket", "unix", socket, "podlife", api.LifecyclePath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial(tc.network, tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", tc.path, tc.host); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(c)
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK || resp.Close {
				t.Fatalf("GET %s: %s, close %v, %v; want 200 on a connection kept alive", tc.path, resp.Status, resp.Close, err)
			}
			// Generous: the server closes it after 100 ms; only a
			// server that never does waits this long.
			if err := c.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
				t.Fatal(err)
			}
			if n, err := r.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
				t.Errorf("an idle keep-alive connection: read %d bytes, %v; want EOF (closed by the server)", n, err)
			}
		})
	}
}

// The read-only endpoint is off without an address: the control socket
// alone serves, /lifecycle too.
func TestNoAddressNoTCPEndpoint(t *testing.T) {
	s, socket := serveWith(t, &host{registry: prometheus.NewRegistry()}, server.Config{})
	if s.Addr() != "" {
		t.Errorf("Addr() = %q with no address, want \"\"", s.Addr())
	}
	l, _, err := client.Lifecycle(t.Context(), socket)
	if err != nil || len(l.Pods) != 1 || l.Pods[0].Name != "web" {
		t.Errorf("GET /lifecycle on the control socket: %+v %v", l, err)
	}
}
