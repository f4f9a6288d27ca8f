package server

import (
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

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
		{query: "sinceSeconds=60", want: logs.Options{TailLines: -1, Since: now.Add(-time.Minute)}},
		{query: "sinceTime=2030-01-01T00:00:00Z", want: logs.Options{TailLines: -1, Since: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{query: "tailLines=9223372036854775807", want: logs.Options{TailLines: math.MaxInt32}},
		{query: "sinceSeconds=9223372036854775807", want: logs.Options{TailLines: -1, Since: now.Add(-time.Duration(math.MaxInt64/int64(time.Second)) * time.Second)}},
		{query: "tailLines=9223372036854775808", err: `tailLines="9223372036854775808" must be an integer of at least 0`},
		{query: "follow=yes", err: `follow="yes" is not a boolean`},
		{query: "tailLines=-1", err: `tailLines="-1" must be an integer of at least 0`},
		{query: "limitBytes=0", err: `limitBytes="0" must be an integer of at least 1`},
		{query: "sinceSeconds=0", err: `sinceSeconds="0" must be an integer of at least 1`},
		{query: "sinceTime=yesterday", err: `sinceTime="yesterday" is not an RFC 3339 time`},
		{query: "sinceTime=2030-01-01T00:00:00Z&sinceSeconds=5", err: "at most one of sinceTime and sinceSeconds"},
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
