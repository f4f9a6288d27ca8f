package stats

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// render is the summary in lines, one for the node, each pod and each
// container: times as seconds after t0, CPU as usage/rate, memory as the
// working set.
func render(s *statsapi.Summary) []string {
	since := func(tm time.Time) string { return fmt.Sprintf("%+gs", tm.Sub(t0).Seconds()) }
	cpuOf := func(c *statsapi.CPUStats) string {
		if c == nil {
			return "cpu=none"
		}
		rate := "none"
		if c.UsageNanoCores != nil {
			rate = fmt.Sprint(*c.UsageNanoCores)
		}
		return fmt.Sprintf("cpu=%d/%s@%s", *c.UsageCoreNanoSeconds, rate, since(c.Time.Time))
	}
	memOf := func(m *statsapi.MemoryStats) string {
		if m == nil {
			return "mem=none"
		}
		return fmt.Sprintf("ws=%d usage=%d rss=%d", *m.WorkingSetBytes, deref(m.UsageBytes), deref(m.RSSBytes))
	}
	out := []string{fmt.Sprintf("node %s start=%d %s %s", s.Node.NodeName, s.Node.StartTime.Unix(), cpuOf(s.Node.CPU), memOf(s.Node.Memory))}
	for _, p := range s.Pods {
		out = append(out, fmt.Sprintf("pod %s/%s uid=%s start=%s %s %s", p.PodRef.Namespace, p.PodRef.Name, p.PodRef.UID, since(p.StartTime.Time), cpuOf(p.CPU), memOf(p.Memory)))
		for _, c := range p.Containers {
			out = append(out, fmt.Sprintf("  %s start=%s %s %s", c.Name, since(c.StartTime.Time), cpuOf(c.CPU), memOf(c.Memory)))
		}
	}
	return out
}

// Two samples of the runtime's stats: the rates come from the second, the
// runtime's own rate wins where it gives one, a pod without sandbox stats
// gets its containers' sum, a container without stats has its name and
// start only, and a stopped pod is not reported.
func TestSummaryFromTheRuntimesStats(t *testing.T) {
	u := func(v uint64) map[string]uint64 { return map[string]uint64{"web/sidecar": v} }
	// summed is every pod as the sum of its containers.
	summed := [2][]string{{
		"node node-a start=1764000000 cpu=138500000000/none@+0s ws=5120000000 usage=6144000000 rss=2560000000",
		"pod default/web uid=w start=-60s cpu=3000000000/none@+0s ws=3000000 usage=3002000 rss=1500000",
		"  app start=-59s cpu=1000000000/none@+0s ws=1000000 usage=1001000 rss=500000",
		"  sidecar start=-58s cpu=2000000000/7@+0s ws=2000000 usage=2001000 rss=1000000",
		"pod jobs/batch uid=b start=-60s cpu=3000000000/none@+0s ws=3000000 usage=3001000 rss=1500000",
		"  idle start=-58s cpu=none mem=none",
		"  work start=-59s cpu=3000000000/none@+0s ws=3000000 usage=3001000 rss=1500000",
	}, {
		"node node-a start=1764000000 cpu=140500000000/500000000@+4s ws=5120000000 usage=6144000000 rss=2560000000",
		"pod default/web uid=w start=-60s cpu=4000000000/250000009@+2s ws=4000000 usage=4002000 rss=2000000",
		"  app start=-59s cpu=1500000000/250000000@+2s ws=1500000 usage=1501000 rss=750000",
		"  sidecar start=-58s cpu=2500000000/9@+2s ws=2500000 usage=2501000 rss=1250000",
		"pod jobs/batch uid=b start=-60s cpu=4000000000/500000000@+2s ws=4000000 usage=4001000 rss=2000000",
		"  idle start=-58s cpu=none mem=none",
		"  work start=-59s cpu=4000000000/500000000@+2s ws=4000000 usage=4001000 rss=2000000",
	}}
	tests := []struct {
		name string
		// noSandboxStats is ListPodSandboxStats's error: a runtime without
		// it, or containerd 1.6 on a sandbox without a cgroup parent.
		noSandboxStats error
		// sandboxCalls is how often the provider asks for sandbox stats
		// in two samples: once only, after a failure.
		sandboxCalls int
		want         [2][]string // after the first and the second sample
	}{
		{name: "sandbox stats for web only", sandboxCalls: 2, want: [2][]string{{
			"node node-a start=1764000000 cpu=138500000000/none@+0s ws=5120000000 usage=6144000000 rss=2560000000",
			"pod default/web uid=w start=-60s cpu=4000000000/none@+0s ws=4000000 usage=4001000 rss=2000000",
			"  app start=-59s cpu=1000000000/none@+0s ws=1000000 usage=1001000 rss=500000",
			"  sidecar start=-58s cpu=2000000000/7@+0s ws=2000000 usage=2001000 rss=1000000",
			"pod jobs/batch uid=b start=-60s cpu=3000000000/none@+0s ws=3000000 usage=3001000 rss=1500000",
			"  idle start=-58s cpu=none mem=none",
			"  work start=-59s cpu=3000000000/none@+0s ws=3000000 usage=3001000 rss=1500000",
		}, {
			"node node-a start=1764000000 cpu=140500000000/500000000@+4s ws=5120000000 usage=6144000000 rss=2560000000",
			"pod default/web uid=w start=-60s cpu=6000000000/1000000000@+2s ws=6000000 usage=6001000 rss=3000000",
			"  app start=-59s cpu=1500000000/250000000@+2s ws=1500000 usage=1501000 rss=750000",
			"  sidecar start=-58s cpu=2500000000/9@+2s ws=2500000 usage=2501000 rss=1250000",
			"pod jobs/batch uid=b start=-60s cpu=4000000000/500000000@+2s ws=4000000 usage=4001000 rss=2000000",
			"  idle start=-58s cpu=none mem=none",
			"  work start=-59s cpu=4000000000/500000000@+2s ws=4000000 usage=4001000 rss=2000000",
		}}},
		{name: "no sandbox stats: every pod summed", noSandboxStats: status.Error(codes.Unimplemented, "no sandbox stats"), sandboxCalls: 1, want: summed},
		{name: "sandbox stats failing: every pod summed", noSandboxStats: status.Error(codes.Unknown, "cgroupPath is empty"), sandboxCalls: 1, want: summed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newFakeNode(t)
			n.runPod(t, "default", "web", "w", "app", "sidecar")
			n.runPod(t, "jobs", "batch", "b", "work", "idle")
			n.runPod(t, "default", "stopped", "s", "gone")
			if err := n.rt.StopPodSandbox(context.Background(), n.ids["stopped"]); err != nil {
				t.Fatal(err)
			}
			n.images.FakeFilesystemUsage = []*runtimeapi.FilesystemUsage{{
				FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: t.TempDir()}, UsedBytes: &runtimeapi.UInt64Value{Value: 1234},
			}}
			samples := []func(){
				func() {
					n.containerStats(0, map[string]uint64{"web/app": 1e9, "web/sidecar": 2e9, "batch/work": 3e9, "stopped/gone": 5e9}, u(7))
					n.sandboxStats(0, map[string]uint64{"web": 4e9})
				},
				func() {
					n.now, n.p.cfg.ProcDir = t0.Add(4*time.Second), "testdata/proc-later"
					n.containerStats(2*time.Second, map[string]uint64{"web/app": 1.5e9, "web/sidecar": 2.5e9, "batch/work": 4e9}, u(9))
					n.sandboxStats(2*time.Second, map[string]uint64{"web": 6e9})
				},
			}
			for i, set := range samples {
				set()
				if tt.noSandboxStats != nil {
					n.rt.InjectError("ListPodSandboxStats", tt.noSandboxStats)
				}
				s, err := n.p.Summary(context.Background(), false)
				if err != nil {
					t.Fatalf("sample %d: %v", i+1, err)
				}
				if got := render(s); !slices.Equal(got, tt.want[i]) {
					t.Errorf("sample %d:\n%s\nwant:\n%s", i+1, strings.Join(got, "\n"), strings.Join(tt.want[i], "\n"))
				}
				rt := s.Node.Runtime
				if rt == nil || deref(rt.ImageFs.UsedBytes) != 1234 || rt.ImageFs.CapacityBytes == nil || rt.ContainerFs != rt.ImageFs {
					t.Errorf("sample %d: runtime filesystems %+v, want the image fs (1234 bytes used, sized) as both", i+1, rt)
				}
				if s.Node.Fs == nil || deref(s.Node.Fs.CapacityBytes) == 0 {
					t.Errorf("sample %d: node fs %+v, want the root directory's filesystem", i+1, s.Node.Fs)
				}
			}
			calls := 0
			for _, c := range n.rt.GetCalls() {
				if c == "ListPodSandboxStats" {
					calls++
				}
			}
			if calls != tt.sandboxCalls {
				t.Errorf("ListPodSandboxStats called %d times in two samples, want %d", calls, tt.sandboxCalls)
			}
		})
	}
}

// A runtime that keeps no stats (the embedded one) gives a summary of the
// node alone; any other failure of the runtime fails the summary.
func TestSummaryWhenTheRuntimeHasNoStats(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		wantErr string
	}{
		{"unimplemented: the node alone", status.Error(codes.Unimplemented, "the embedded runtime has no ListContainerStats"), ""},
		{"unavailable: an error", status.Error(codes.Unavailable, "connection refused"), "pod stats: ListContainerStats: rpc error: code = Unavailable desc = connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newFakeNode(t)
			n.runPod(t, "default", "web", "w", "app")
			n.rt.InjectError("ListContainerStats", tt.err)
			s, err := n.p.Summary(context.Background(), false)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Node.NodeName != "node-a" || s.Node.CPU == nil || s.Pods == nil || len(s.Pods) != 0 {
				t.Errorf("summary %v, want node-a's stats and an empty list of pods", render(s))
			}
			if s.Node.Runtime != nil {
				t.Errorf("runtime filesystems %+v of a runtime that names none", s.Node.Runtime)
			}
		})
	}
}

func TestNewRefusesAnIncompleteConfig(t *testing.T) {
	n := newFakeNode(t)
	good := Config{Runtime: n.rt, Images: n.images, NodeName: "n", RootDir: "/"}
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no runtime", func(c *Config) { c.Runtime = nil }, "stats: Config.Runtime is nil"},
		{"no images", func(c *Config) { c.Images = nil }, "stats: Config.Images is nil"},
		{"no node name", func(c *Config) { c.NodeName = "" }, "stats: Config.NodeName is empty"},
		{"no root dir", func(c *Config) { c.RootDir = "" }, "stats: Config.RootDir is empty"},
	}
	for _, tt := range tests {
		cfg := good
		tt.change(&cfg)
		if _, err := New(cfg); err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
	if _, err := New(good); err != nil {
		t.Errorf("a complete config: %v", err)
	}
}
