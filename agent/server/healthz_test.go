package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// health is a host whose problem is a test's to set.
type health string

func (h health) HealthProblem() string { return string(h) }

// The healthz port answers GET /healthz as the kubelet's (200 ok, or 500
// saying what is wrong) and nothing else: no other path, no other method.
func TestHealthzPort(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, problem, method, path string
		code                        int
		body                        string
	}{
		{"healthy", "", "GET", "/healthz", 200, "ok\n"},
		{"head", "", "HEAD", "/healthz", 200, ""},
		{"unhealthy", "housekeeping has not run for 3 intervals", "GET", "/healthz", 500, "housekeeping has not run for 3 intervals\n"},
		{"pods are not here", "", "GET", "/pods", 404, "404 page not found\n"},
		{"metrics are not here", "", "GET", "/metrics", 404, "404 page not found\n"},
		{"nor the lifecycle", "", "GET", "/lifecycle", 404, "404 page not found\n"},
		{"under healthz", "", "GET", "/healthz/ping", 404, "404 page not found\n"},
		{"GET only", "", "POST", "/healthz", 405, "Method Not Allowed\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ListenHealthz(health(tc.problem), "127.0.0.1:0", nil)
			if err != nil {
				t.Fatal(err)
			}
			h.Start()
			t.Cleanup(func() { h.Shutdown(context.Background()) })
			req, _ := http.NewRequest(tc.method, "http://"+h.Addr()+tc.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code || string(body) != tc.body {
				t.Errorf("%s %s = %d %q, want %d %q", tc.method, tc.path, resp.StatusCode, body, tc.code, tc.body)
			}
		})
	}
}

// A port already taken is an error that names the flags.
func TestHealthzPortTaken(t *testing.T) {
	t.Parallel()
	h, err := ListenHealthz(health(""), "127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := ListenHealthz(health(""), h.Addr(), nil); err == nil || !strings.Contains(err.Error(), "--healthz-port") {
		t.Errorf("a second healthz listener on %s: %v, want an error naming --healthz-port", h.Addr(), err)
	}
}
