package stats

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// scrape is GET /metrics/resource of c as the kubelet API serves it: a
// registry of its own (a pedantic one, which checks the series against
// their descriptions).
func scrape(t *testing.T, c prometheus.Collector) (int, string) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics/resource", nil))
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
			code, body := scrape(t, n.p.ResourceMetrics())
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

// With onlyCPUAndMemory the node, pods and containers keep only their
// CPU and memory, as metrics-server asks for them.
func TestSummaryOnlyCPUAndMemory(t *testing.T) {
	n := newFakeNode(t)
	n.runPod(t, "default", "web", "w", "app")
	n.containerStats(0, map[string]uint64{"web/app": 1e9}, nil)
	n.rt.FakeContainerStats[n.ids["web/app"]].WritableLayer = &runtimeapi.FilesystemUsage{UsedBytes: &runtimeapi.UInt64Value{Value: 4096}}
	n.images.FakeFilesystemUsage = []*runtimeapi.FilesystemUsage{{UsedBytes: &runtimeapi.UInt64Value{Value: 1234}}}
	tests := []struct {
		only bool
		want []string // substrings of the JSON
		not  []string
	}{
		{false, []string{`"nodeName":"node-a"`, `"podRef":{"name":"web","namespace":"default","uid":"w"}`, `"usageCoreNanoSeconds":1000000000`, `"fs":{`, `"imageFs":{`, `"rootfs":{`, `"usedBytes":4096`}, nil},
		{true, []string{`"nodeName":"node-a"`, `"podRef":{"name":"web","namespace":"default","uid":"w"}`, `"usageCoreNanoSeconds":1000000000`, `"workingSetBytes":1000000`}, []string{`"fs":`, `"runtime":`, `"rootfs":`}},
	}
	for _, tt := range tests {
		s, err := n.p.Summary(context.Background(), tt.only)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("only CPU and memory %v: the summary lacks %s:\n%s", tt.only, w, b)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(string(b), w) {
				t.Errorf("only CPU and memory %v: the summary has %s:\n%s", tt.only, w, b)
			}
		}
	}
}
