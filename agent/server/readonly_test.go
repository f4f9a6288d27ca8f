package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHostCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, listen, host string
		want               bool
		configured         string // "": the listen address
	}{
		{"bound address", "127.0.0.1:10255", "127.0.0.1:10255", true, ""},
		{"localhost", "127.0.0.1:10255", "localhost:10255", true, ""},
		{"localhost in capitals", "127.0.0.1:10255", "LocalHost:10255", true, ""},
		{"IPv6 loopback", "127.0.0.1:10255", "[::1]:10255", true, ""},
		{"other bound address", "10.0.0.5:10255", "10.0.0.5:10255", true, ""},
		{"localhost beside another bound address", "10.0.0.5:10255", "localhost:10255", true, ""},
		{"IPv6 bound address", "[fd00::5]:8080", "[fd00::5]:8080", true, ""},
		{"no port on port 80", "127.0.0.1:80", "localhost", true, ""},
		{"IPv6 without port on port 80", "127.0.0.1:80", "[::1]", true, ""},
		{"configured host name", "10.0.0.5:10255", "node1.example:10255", true, "node1.example:10255"},
		{"configured with port 0", "127.0.0.1:41234", "localhost:41234", true, "127.0.0.1:0"},

		{"foreign host", "127.0.0.1:10255", "evil.example", false, ""},
		{"rebinding host with the right port", "127.0.0.1:10255", "evil.example:10255", false, ""},
		{"subdomain of localhost", "127.0.0.1:10255", "localhost.evil.example:10255", false, ""},
		{"localhost with a trailing dot", "127.0.0.1:10255", "localhost.:10255", false, ""},
		{"wrong port", "127.0.0.1:10255", "127.0.0.1:10256", false, ""},
		{"no port on another port", "127.0.0.1:10255", "127.0.0.1", false, ""},
		{"port with junk", "127.0.0.1:10255", "127.0.0.1:10255.evil.example", false, ""},
		{"missing host", "127.0.0.1:10255", "", false, ""},
		{"another machine's address", "127.0.0.1:10255", "10.0.0.5:10255", false, ""},
		{"wrong port for the configured name", "10.0.0.5:10255", "node1.example:80", false, "node1.example:10255"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			configured := tc.configured
			if configured == "" {
				configured = tc.listen
			}
			if got := newHostCheck(tc.listen, configured).allows(tc.host); got != tc.want {
				t.Errorf("listening on %s, Host %q allowed: %v, want %v", tc.listen, tc.host, got, tc.want)
			}
		})
	}
}

// Only reads for this endpoint reach the routes; the rest gets a status
// and a message that says why, and where control went.
func TestTCPGuard(t *testing.T) {
	t.Parallel()
	const socket = "/var/lib/podlife/podlife.sock"
	reached := false
	guard := tcpGuard(newHostCheck("127.0.0.1:10255", "127.0.0.1:10255"), socket, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached = true
		w.WriteHeader(http.StatusOK)
	}))
	for _, tc := range []struct {
		name, method, host, origin string
		wantCode                   int
		wantBody                   []string
	}{
		{name: "GET", method: http.MethodGet, host: "127.0.0.1:10255", wantCode: http.StatusOK},
		{name: "HEAD", method: http.MethodHead, host: "localhost:10255", wantCode: http.StatusOK},
		{name: "POST /shutdown", method: http.MethodPost, host: "127.0.0.1:10255", wantCode: http.StatusMethodNotAllowed,
			wantBody: []string{"read-only", socket, "podlife shutdown"}},
		{name: "PUT", method: http.MethodPut, host: "127.0.0.1:10255", wantCode: http.StatusMethodNotAllowed, wantBody: []string{"read-only"}},
		{name: "DELETE", method: http.MethodDelete, host: "127.0.0.1:10255", wantCode: http.StatusMethodNotAllowed, wantBody: []string{"read-only"}},
		{name: "OPTIONS", method: http.MethodOptions, host: "127.0.0.1:10255", wantCode: http.StatusMethodNotAllowed, wantBody: []string{"read-only"}},
		{name: "form POST of another site", method: http.MethodPost, host: "127.0.0.1:10255", origin: "http://evil.example",
			wantCode: http.StatusMethodNotAllowed, wantBody: []string{"read-only"}},
		{name: "form POST of another site with its host", method: http.MethodPost, host: "evil.example:10255", origin: "http://evil.example:10255",
			wantCode: http.StatusForbidden, wantBody: []string{`host "evil.example:10255"`, "localhost:10255", "DNS rebinding"}},
		{name: "GET with a rebinding host", method: http.MethodGet, host: "evil.example:10255", wantCode: http.StatusForbidden,
			wantBody: []string{`host "evil.example:10255"`}},
		{name: "GET without host", method: http.MethodGet, host: "", wantCode: http.StatusForbidden, wantBody: []string{`host ""`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reached = false
			r := httptest.NewRequest(tc.method, "/shutdown", nil)
			r.Host = tc.host
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			w := httptest.NewRecorder()
			guard.ServeHTTP(w, r)
			if w.Code != tc.wantCode {
				t.Errorf("%s with Host %q: %d, want %d (%s)", tc.method, tc.host, w.Code, tc.wantCode, w.Body)
			}
			if reached != (tc.wantCode == http.StatusOK) {
				t.Errorf("the route was reached: %v", reached)
			}
			for _, want := range tc.wantBody {
				if !strings.Contains(w.Body.String(), want) {
					t.Errorf("body %q does not mention %q", w.Body, want)
				}
			}
			if tc.wantCode == http.StatusMethodNotAllowed && w.Header().Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow %q, want GET, HEAD", w.Header().Get("Allow"))
			}
		})
	}
}
