package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Only reads reach the routes, whatever the Host (the kubelet checks none:
// the node e2e suite asks for 0.0.0.0:10255); the rest gets a status and
// a message that says why, and where control went.
func TestReadOnly(t *testing.T) {
	t.Parallel()
	const socket = "/var/lib/podlife/podlife.sock"
	reached := false
	guard := readOnly(socket, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
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
			wantCode: http.StatusMethodNotAllowed, wantBody: []string{"read-only"}},
		{name: "GET for the unspecified address", method: http.MethodGet, host: "0.0.0.0:10255", wantCode: http.StatusOK},
		{name: "GET for a node name", method: http.MethodGet, host: "node1.example:10255", wantCode: http.StatusOK},
		{name: "GET without host", method: http.MethodGet, host: "", wantCode: http.StatusOK},
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
