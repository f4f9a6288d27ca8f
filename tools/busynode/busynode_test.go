package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestPercentile(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		var ds []time.Duration
		for _, x := range xs {
			ds = append(ds, time.Duration(x)*time.Millisecond)
		}
		return ds
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100..1, unsorted
	}
	for _, tc := range []struct {
		name string
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7 * time.Millisecond},
		{"p50 of 1..100 is the 50th", ms(hundred...), 0.5, 50 * time.Millisecond},
		{"p90 of 1..100 is the 90th", ms(hundred...), 0.9, 90 * time.Millisecond},
		{"p99 of 1..100 is the 99th", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"p99 of 10 values is the largest", ms(5, 1, 9, 3, 7, 2, 8, 4, 6, 10), 0.99, 10 * time.Millisecond},
		{"p50 of 4 values is the 2nd", ms(40, 10, 30, 20), 0.5, 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.ds, tc.p); got != tc.want {
				t.Errorf("percentile(%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func TestParseStatCPU(t *testing.T) {
	odd, err := os.ReadFile("testdata/stat-odd-name.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, line string
		want       time.Duration
		wantErr    bool
	}{
		// utime 1234 + stime 567 ticks of 10 ms.
		{"command name with spaces and parentheses", string(odd), 18010 * time.Millisecond, false},
		{"no command name", "4242 kubelet S 1", 0, true},
		{"too short", "4242 (kubelet) S 1 2 3", 0, true},
		{"not a number", "1 (a) S 1 1 1 0 -1 0 0 0 0 0 x 5 0", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatCPU(tc.line)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseStatCPU = %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParseStatusMemory(t *testing.T) {
	status, err := os.ReadFile("testdata/status.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, status string
		want         memory
		wantErr      bool
	}{
		{"kubelet's status", string(status), memory{rss: 81920 << 10, hwm: 92160 << 10}, false},
		{"no VmHWM", "VmRSS:\t 10 kB\n", memory{}, true},
		{"a kernel thread has neither", "Name:\tkthreadd\n", memory{}, true},
		{"garbage", "VmRSS:\t ten kB\nVmHWM:\t 10 kB\n", memory{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatusMemory(tc.status)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseStatusMemory = %+v, %v; want %+v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestMedianOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"odd", []float64{3, 1, 2}, 2},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"not reached counts as largest", []float64{-1, 5, 7}, 7},
		{"a median on not reached is not reached", []float64{-1, -1, 7}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := medianOf(tc.xs); got != tc.want {
				t.Errorf("medianOf(%v) = %v, want %v", tc.xs, got, tc.want)
			}
		})
	}
}

func TestTable(t *testing.T) {
	f, err := os.Open("testdata/results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	results, err := readResults(f)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := writeTable(&got, results, []string{"kubelet", "podlife"}); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/table.md")
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("table:\n%s\nwant:\n%s", got.String(), want)
	}
	if err := writeTable(&got, results, []string{"kubelet", "crio"}); err == nil || !strings.Contains(err.Error(), "crio") {
		t.Errorf("a node without rounds: error %v, want one naming it", err)
	}
	if _, err := readResults(strings.NewReader("{not json\n")); err == nil {
		t.Error("readResults accepted a line that is not JSON")
	}
}

func TestStarted(t *testing.T) {
	running := v1.ContainerStatus{Name: "main", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}, Started: ptr.To(true)}
	notStarted := running
	notStarted.Started = ptr.To(false)
	waiting := v1.ContainerStatus{Name: "main", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}}
	pod := func(phase v1.PodPhase, statuses ...v1.ContainerStatus) *v1.Pod {
		p := (options{node: "n", image: "i"}).pod("ns", 0)
		p.Status = v1.PodStatus{Phase: phase, ContainerStatuses: statuses}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{"running and started", pod(v1.PodRunning, running), true},
		{"pending", pod(v1.PodPending, running), false},
		{"no container status yet", pod(v1.PodRunning), false},
		{"running but its startup not yet over", pod(v1.PodRunning, notStarted), false},
		{"waiting", pod(v1.PodRunning, waiting), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := started(tc.pod); got != tc.want {
				t.Errorf("started = %v, want %v", got, tc.want)
			}
		})
	}
}
