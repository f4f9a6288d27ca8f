package stats

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// get serves one GET of target through h and returns the status and body.
func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	body, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, string(body)
}

// The resource metrics of the fake node, in the text form metrics-server
// parses, with the kubelet's names, labels and the samples' timestamps:
// the container without stats is left out, and when the runtime keeps no
// stats the node's series remain with the scrape error set.
func TestResourceMetrics(t *testing.T) {
	tests := []struct {
		name     string
		inject   error
		golden   string
		wantCode int
	}{
		{name: "pods", golden: "testdata/resource-metrics.txt", wantCode: http.StatusOK},
		{name: "runtime without stats", inject: status.Error(codes.Unimplemented, "no stats"), golden: "testdata/resource-metrics-node-only.txt", wantCode: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newFakeNode(t)
			n.runPod(t, "default", "web", "w", "app", "sidecar")
			n.runPod(t, "jobs", "batch", "b", "work", "idle")
			n.containerStats(2*time.Second, map[string]uint64{"web/app": 1.5e9, "web/sidecar": 2.5e9, "batch/work": 4e9}, nil)
			n.sandboxStats(2*time.Second, map[string]uint64{"web": 6e9})
			if tt.inject != nil {
				n.rt.InjectError("ListContainerStats", tt.inject)
			}
			code, body := get(t, n.p.ResourceMetricsHandler(), "/metrics/resource")
			want, err := os.ReadFile(tt.golden)
			if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode || body != string(want) {
				t.Errorf("status %d, body:\n%s\nwant %d and %s:\n%s", code, body, tt.wantCode, tt.golden, want)
			}
		})
	}
}

// The summary handler serves the summary as JSON, trimmed to CPU and
// memory on request; bad input gets a 400 naming the parameter.
func TestSummaryHandler(t *testing.T) {
	n := newFakeNode(t)
	n.runPod(t, "default", "web", "w", "app")
	n.containerStats(0, map[string]uint64{"web/app": 1e9}, nil)
	n.images.FakeFilesystemUsage = nil
	tests := []struct {
		target   string
		wantCode int
		want     []string // substrings of the body
		not      []string
	}{
		{"/stats/summary", http.StatusOK, []string{`"nodeName":"node-a"`, `"podRef":{"name":"web","namespace":"default","uid":"w"}`, `"usageCoreNanoSeconds":1000000000`, `"fs":{`}, nil},
		{"/stats/summary?only_cpu_and_memory=true", http.StatusOK, []string{`"nodeName":"node-a"`, `"workingSetBytes":1000000`}, []string{`"fs":`}},
		{"/stats/summary?only_cpu_and_memory=maybe", http.StatusBadRequest, []string{"query parameter only_cpu_and_memory"}, nil},
	}
	for _, tt := range tests {
		code, body := get(t, n.p.SummaryHandler(), tt.target)
		if code != tt.wantCode {
			t.Errorf("%s: status %d, want %d: %s", tt.target, code, tt.wantCode, body)
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: body lacks %s:\n%s", tt.target, w, body)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(body, w) {
				t.Errorf("%s: body has %s:\n%s", tt.target, w, body)
			}
		}
	}
	n.rt.InjectError("ListContainerStats", status.Error(codes.Unavailable, "down"))
	if code, body := get(t, n.p.SummaryHandler(), "/stats/summary"); code != http.StatusInternalServerError || !strings.Contains(body, "ListContainerStats") {
		t.Errorf("runtime down: status %d body %q, want 500 naming the call", code, body)
	}
	rec := httptest.NewRecorder()
	n.p.SummaryHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/stats/summary", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", rec.Code)
	}
}
