package kubeletserver

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// testHandler is the kubelet API's handler for node n1 over host, with
// testAuth(allowed...) and stats (nil: none).
func testHandler(t testing.TB, host Host, stats StatsProvider, allowed ...string) http.Handler {
	t.Helper()
	s, err := newServer(host, Config{NodeName: "n1", Auth: testAuth(allowed...), Stats: stats})
	if err != nil {
		t.Fatal(err)
	}
	return s.Handler()
}

// do sends method path as user ("" for none), as an upgrade to SPDY if
// upgrade, to h served on a real connection (the proxy hijacks it), and
// returns the status and body.
func do(t testing.TB, h http.Handler, method, path, user string, upgrade bool) (int, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	r, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		r.Header.Set("Authorization", "Bearer "+user)
	}
	if upgrade {
		r.Header.Set("Connection", "Upgrade")
		r.Header.Set("Upgrade", "SPDY/3.1")
	}
	resp, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// runtimeStreams stands for the runtime's streaming server: it refuses
// every session (418), saying what it was asked, which the proxy passes on.
func runtimeStreams(t testing.TB) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "runtime saw "+r.Method+" "+r.URL.Path+" upgrade="+r.Header.Get("Upgrade"), http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Every route asks for an authenticated user (401) allowed by the
// authorizer (403, in the kubelet's words), then serves what the host has.
func TestHandler(t *testing.T) {
	unimplemented := status.Error(codes.Unimplemented, "method Exec not implemented")
	tests := []struct {
		name      string
		method    string
		path      string
		user      string
		stats     bool
		upgrade   bool
		streamErr error
		code      int
		body      []string // substrings of the body
		asked     string   // what the host's streams were asked
	}{
		{name: "no credentials", method: "GET", path: "/pods", code: 401, body: []string{"Unauthorized"}},
		{name: "no credentials on exec", method: "POST", path: "/exec/ns/web/app?command=sh&input=1", code: 401},
		{name: "forbidden pods", method: "GET", path: "/pods", user: "eve", code: 403,
			body: []string{"Forbidden (user=eve, verb=get, resource=nodes, subresource(s)=[pods proxy])"}},
		{name: "forbidden exec", method: "POST", path: "/exec/ns/web/app?command=sh&output=1", user: "eve", code: 403,
			body: []string{"Forbidden (user=eve, verb=create, resource=nodes, subresource(s)=[proxy])"}},
		{name: "forbidden stats", method: "GET", path: "/stats/summary", user: "eve", code: 403, body: []string{"subresource(s)=[stats]"}},
		{name: "pods as pods", method: "GET", path: "/pods", user: "pods-reader", code: 200, body: []string{`"kind":"PodList"`, `"name":"web"`}},
		{name: "pods as proxy", method: "GET", path: "/pods", user: "admin", code: 200, body: []string{`"uid":"uid-web"`}},
		{name: "logs user cannot read metrics", method: "GET", path: "/metrics", user: "logs-reader", code: 403, body: []string{"subresource(s)=[metrics]"}},
		{name: "metrics user cannot exec", method: "POST", path: "/exec/ns/web/app?command=sh&output=1", user: "metrics-reader", code: 403},
		{name: "healthz", method: "GET", path: "/healthz", user: "admin", code: 200, body: []string{"ok"}},
		{name: "metrics", method: "GET", path: "/metrics", user: "metrics-reader", code: 200, body: []string{"podlife_test_total 1"}},
		{name: "probe metrics", method: "GET", path: "/metrics/probes", user: "metrics-reader", code: 200,
			body: []string{`prober_probe_total{probe_type="Readiness",result="successful"} 3`}},
		{name: "no stats provider", method: "GET", path: "/stats/summary", user: "admin", code: 503, body: []string{"stats not available"}},
		{name: "no stats provider: resource metrics", method: "GET", path: "/metrics/resource", user: "admin", code: 503, body: []string{"stats not available"}},
		{name: "summary", method: "GET", path: "/stats/summary", user: "admin", stats: true, code: 200, body: []string{`"nodeName":"n1"`, `"name":"web"`}},
		{name: "summary cpu and memory", method: "GET", path: "/stats/summary?only_cpu_and_memory=true", user: "admin", stats: true, code: 200, body: []string{`"pods":null`}},
		{name: "resource metrics", method: "GET", path: "/metrics/resource", user: "metrics-reader", stats: true, code: 200, body: []string{"node_memory_working_set_bytes 42"}},
		{name: "container log", method: "GET", path: "/containerLogs/ns/web/app?tailLines=2&timestamps=true", user: "admin", code: 200,
			body: []string{"2030-01-02T03:04:02Z two\n2030-01-02T03:04:03Z three\n"}},
		{name: "container log follow of an exited instance", method: "GET", path: "/containerLogs/ns/web/app?follow=true&limitBytes=4", user: "admin", code: 200, body: []string{"one\n"}},
		{name: "container log huge tail", method: "GET", path: "/containerLogs/ns/web/app?tailLines=9223372036854775807", user: "admin", code: 200, body: []string{"one\ntwo\nthree\n"}},
		{name: "container log tail of 2^62", method: "GET", path: "/containerLogs/ns/web/app?tailLines=4611686018427387904", user: "admin", code: 200, body: []string{"one\ntwo\nthree\n"}},
		{name: "container log tail over int64", method: "GET", path: "/containerLogs/ns/web/app?tailLines=9223372036854775808", user: "admin", code: 400, body: []string{"tailLines: Invalid value"}},
		{name: "container log older tail", method: "GET", path: "/containerLogs/ns/web/app?tail=1", user: "admin", code: 200, body: []string{"three\n"}},
		{name: "container log stream", method: "GET", path: "/containerLogs/ns/web/app?stream=Stdout", user: "admin", code: 400, body: []string{"stream: Forbidden: may not be specified"}},
		{name: "container log bad tail", method: "GET", path: "/containerLogs/ns/web/app?tailLines=x", user: "admin", code: 400, body: []string{`tailLines: Invalid value: "x": must be an integer from 0 to 9223372036854775807`}},
		{name: "container log bad since", method: "GET", path: "/containerLogs/ns/web/app?sinceSeconds=-4", user: "admin", code: 400, body: []string{`sinceSeconds: Invalid value: -4: must be greater than 0`}},
		{name: "container log bad sinceTime", method: "GET", path: "/containerLogs/ns/web/app?sinceTime=now", user: "admin", code: 400, body: []string{`sinceTime: Invalid value: "now": must be an RFC 3339 time`}},
		{name: "container log bad limit", method: "GET", path: "/containerLogs/ns/web/app?limitBytes=0", user: "admin", code: 400, body: []string{`limitBytes: Invalid value: 0: must be greater than 0`}},
		{name: "container log bad follow", method: "GET", path: "/containerLogs/ns/web/app?follow=maybe", user: "admin", code: 400, body: []string{`follow: Invalid value: "maybe": must be a boolean`}},
		{name: "container log of another pod", method: "GET", path: "/containerLogs/ns/db/app", user: "admin", code: 404, body: []string{"ns/db"}},
		{name: "container log by proxy only", method: "GET", path: "/containerLogs/ns/web/app", user: "logs-reader", code: 403, body: []string{"subresource(s)=[proxy]"}},
		{name: "exec needs an upgrade", method: "POST", path: "/exec/ns/web/app?command=sh&input=1", user: "admin", code: 400, body: []string{"Upgrade request required"}},
		{name: "exec proxied to the runtime", method: "POST", path: "/exec/ns/web/app?command=sh&command=-c&command=id&input=1&output=1&tty=1", user: "admin", upgrade: true,
			code: 418, body: []string{"runtime saw POST /exec/token upgrade=SPDY/3.1"}, asked: "exec ns/web app [sh -c id] {true true false true}"},
		{name: "exec kubectl's parameter names", method: "GET", path: "/exec/ns/web/app?command=ls&stdout=true&stderr=true", user: "admin", upgrade: true,
			code: 418, asked: "exec ns/web app [ls] {false true true false}"},
		{name: "exec with uid", method: "POST", path: "/exec/ns/web/uid-web/app?command=ls&output=1", user: "admin", upgrade: true, code: 418, asked: "exec ns/web app [ls] {false true false false}"},
		{name: "exec with another uid", method: "POST", path: "/exec/ns/web/uid-other/app?command=ls&output=1", user: "admin", upgrade: true, code: 404},
		{name: "exec no stream", method: "POST", path: "/exec/ns/web/app?command=ls", user: "admin", upgrade: true, code: 400, body: []string{"at least 1 of stdin, stdout, stderr"}},
		{name: "exec bad boolean", method: "POST", path: "/exec/ns/web/app?command=ls&stdin=perhaps", user: "admin", upgrade: true, code: 400, body: []string{`stdin="perhaps"`}},
		{name: "exec no command", method: "POST", path: "/exec/ns/web/app?output=1", user: "admin", upgrade: true, code: 400, body: []string{"no command"}},
		{name: "exec on the embedded runtime", method: "POST", path: "/exec/ns/web/app?command=ls&output=1", user: "admin", upgrade: true, streamErr: unimplemented, code: 501,
			body: []string{"serves no streaming", "containerd"}, asked: "exec ns/web app [ls] {false true false false}"},
		{name: "exec of a stopped container", method: "POST", path: "/exec/ns/web/app?command=ls&output=1", user: "admin", upgrade: true, streamErr: notRunning{}, code: 404,
			body: []string{"not running"}, asked: "exec ns/web app [ls] {false true false false}"},
		{name: "exec runtime failure", method: "POST", path: "/exec/ns/web/app?command=ls&output=1", user: "admin", upgrade: true, streamErr: errors.New("runtime down"), code: 500,
			body: []string{"runtime down"}, asked: "exec ns/web app [ls] {false true false false}"},
		{name: "exec of another pod", method: "POST", path: "/exec/ns/db/app?command=ls&output=1", user: "admin", upgrade: true, code: 404},
		{name: "exec is not PUT", method: "PUT", path: "/exec/ns/web/app?command=ls&output=1", user: "admin", upgrade: true, code: 405},
		{name: "attach", method: "POST", path: "/attach/ns/web/app?input=1&output=1&error=1", user: "admin", upgrade: true, code: 418,
			body: []string{"runtime saw POST /exec/token"}, asked: "attach ns/web app {true true true false}"},
		{name: "attach needs an upgrade", method: "POST", path: "/attach/ns/web/app?output=1", user: "admin", code: 400, body: []string{"Upgrade request required"}},
		{name: "port-forward", method: "POST", path: "/portForward/ns/web?port=80&port=8080", user: "admin", upgrade: true, code: 418, asked: "portforward ns/web [80 8080]"},
		{name: "port-forward bad port", method: "POST", path: "/portForward/ns/web?port=70000", user: "admin", upgrade: true, code: 400, body: []string{`port="70000"`}},
		{name: "port-forward of another pod", method: "GET", path: "/portForward/ns/db", user: "admin", upgrade: true, code: 404},
		{name: "run", method: "POST", path: "/run/ns/web/app?cmd=echo+hi", user: "admin", code: 200, body: []string{"hi\n"}, asked: "run ns/web app [echo hi]"},
		{name: "run fails", method: "POST", path: "/run/ns/web/app?cmd=false", user: "admin", streamErr: errors.New("command terminated with exit code 1"), code: 500,
			body: []string{"exit code 1"}, asked: "run ns/web app [false]"},
		{name: "run no command", method: "POST", path: "/run/ns/web/app", user: "admin", code: 400, body: []string{"no command"}},
		{name: "run is POST only", method: "GET", path: "/run/ns/web/app?cmd=ls", user: "admin", code: 405},
		{name: "unknown path", method: "GET", path: "/flagz", user: "admin", code: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := newFakeHost(t)
			host.streamErr = tt.streamErr
			host.runOut = []byte("hi\n")
			host.streamURL = runtimeStreams(t) + "/exec/token"
			var stats StatsProvider
			if tt.stats {
				stats = fakeStats{}
			}
			h := testHandler(t, host, stats, "admin *", "pods-reader pods", "logs-reader log", "metrics-reader metrics")
			code, body := do(t, h, tt.method, tt.path, tt.user, tt.upgrade)
			if code != tt.code {
				t.Errorf("%s %s: %d %q, want %d", tt.method, tt.path, code, body, tt.code)
			}
			for _, want := range tt.body {
				if !strings.Contains(body, want) {
					t.Errorf("%s %s: body %q, want it to contain %q", tt.method, tt.path, body, want)
				}
			}
			if got := strings.Join(host.asked, "; "); got != tt.asked {
				t.Errorf("%s %s: the host was asked %q, want %q", tt.method, tt.path, got, tt.asked)
			}
		})
	}
}

// notRunning is a host's error for a container with nothing running.
type notRunning struct{}

func (notRunning) Error() string  { return "container app of pod ns/web is not running" }
func (notRunning) NotFound() bool { return true }

// /healthz says what is wrong.
func TestHealthzProblem(t *testing.T) {
	host := newFakeHost(t)
	host.health = "housekeeping has not run for 3 intervals"
	code, body := do(t, testHandler(t, host, nil, "admin *"), "GET", "/healthz", "admin", false)
	if code != 500 || !strings.Contains(body, host.health) {
		t.Errorf("GET /healthz = %d %q, want 500 saying why", code, body)
	}
}
