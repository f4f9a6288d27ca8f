package server

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/cri/logs"
)

// The /containerLogs query parameters, as the kubelet reads them.
func TestParseLogQuery(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		query    string
		want     logs.Options
		previous bool
		err      string
	}{
		{query: "", want: logs.Options{TailLines: -1}},
		{query: "follow=true&timestamps=1&previous=true", want: logs.Options{TailLines: -1, Follow: true, Timestamps: true}, previous: true},
		{query: "tailLines=0", want: logs.Options{TailLines: 0}},
		{query: "tailLines=7&limitBytes=100", want: logs.Options{TailLines: 7, LimitBytes: 100}},
		{query: "tail=7", want: logs.Options{TailLines: 7}},
		{query: "tail=all&tailLines=7", want: logs.Options{TailLines: -1}},
		{query: "sinceSeconds=60", want: logs.Options{TailLines: -1, Since: now.Add(-time.Minute)}},
		{query: "sinceTime=2030-01-01T00:00:00Z", want: logs.Options{TailLines: -1, Since: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{query: "tailLines=4611686018427387904", want: logs.Options{TailLines: 1 << 62}},
		{query: "tailLines=9223372036854775807&limitBytes=9223372036854775807", want: logs.Options{TailLines: math.MaxInt64, LimitBytes: math.MaxInt64}},
		{query: "sinceSeconds=9223372036854775807", want: logs.Options{TailLines: -1, Since: now.Add(-time.Duration(math.MaxInt64/int64(time.Second)) * time.Second)}},
		{query: "tailLines=9223372036854775808", err: `tailLines: Invalid value: "9223372036854775808": must be an integer from 0 to 9223372036854775807`},
		{query: "tailLines=1e3", err: `tailLines: Invalid value: "1e3": must be an integer`},
		{query: "tail=-5", err: `tailLines: Invalid value: -5: must be greater than or equal to 0`},
		{query: "follow=yes", err: `follow: Invalid value: "yes": must be a boolean`},
		{query: "tailLines=-1", err: `tailLines: Invalid value: -1: must be greater than or equal to 0`},
		{query: "tailLines=-9223372036854775808", err: `tailLines: Invalid value: -9223372036854775808: must be greater than or equal to 0`},
		{query: "limitBytes=0", err: `limitBytes: Invalid value: 0: must be greater than 0`},
		{query: "limitBytes=-9223372036854775809", err: `limitBytes: Invalid value: "-9223372036854775809": must be an integer from 1 to`},
		{query: "sinceSeconds=0", err: `sinceSeconds: Invalid value: 0: must be greater than 0`},
		{query: "sinceTime=yesterday", err: `sinceTime: Invalid value: "yesterday": must be an RFC 3339 time`},
		{query: "sinceTime=2030-01-01T00:00:00Z&sinceSeconds=5", err: "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"},
		{query: "stream=Stderr", err: "stream: Forbidden: may not be specified"},
		{query: "tailLines=-1&limitBytes=0", err: "[tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]"},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		got, previous, err := parseLogQuery(q, now)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseLogQuery(%q): %v, want error %q", tt.query, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want || previous != tt.previous {
			t.Errorf("parseLogQuery(%q) = %+v, %v, %v; want %+v, %v", tt.query, got, previous, err, tt.want, tt.previous)
		}
	}
}

// FuzzParseLogQuery: any query is parsed or refused, never a panic, and
// what is accepted is what the reader takes: TailLines -1 (all) or from 0,
// LimitBytes 0 (none) or from 1, a Since not after now.
func FuzzParseLogQuery(f *testing.F) {
	for _, q := range []string{"tailLines=4611686018427387904", "tail=all", "sinceSeconds=9223372036854775807&limitBytes=1",
		"sinceTime=0001-01-01T00:00:00Z", "tailLines=-0", "limitBytes=+5"} {
		f.Add(q)
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, query string) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		opts, _, err := parseLogQuery(q, now)
		if err != nil {
			return
		}
		if opts.TailLines < -1 || opts.LimitBytes < 0 || (q.Get("sinceSeconds") != "" && opts.Since.After(now)) {
			t.Errorf("parseLogQuery(%q) accepted %+v", query, opts)
		}
	})
}

// cutSource fails a lookup as a runtime call does when its context ends.
type cutSource struct{}

func (cutSource) ContainerLog(ctx context.Context, _, _, _ string, _ bool) (*logs.ContainerLog, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("list its instances: %w", ctx.Err())
}

// A lookup cut by the request's end (the agent stopping) answers 503, which
// a caller may retry, not 500.
func TestContainerLogsCutLookupIsUnavailable(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/containerLogs/ns/web/app", nil)
	r.SetPathValue("namespace", "ns")
	r.SetPathValue("pod", "web")
	r.SetPathValue("container", "app")
	w := httptest.NewRecorder()
	ContainerLogs{Source: cutSource{}, Clock: clocktesting.NewFakePassiveClock(time.Now())}.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "the agent may be stopping") {
		t.Errorf("a lookup cut by the request's end: %d %q, want 503 saying the agent may be stopping", w.Code, w.Body.String())
	}
}
