package stats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/podlife/podlife/cri"
)

// Config is what a Provider reads.
type Config struct {
	// Runtime and Images are the CRI services (the agent's limited ones:
	// the stats calls are reads and queue in the read lane).
	Runtime cri.Runtime
	Images  cri.Images
	// NodeName names the node in the summary.
	NodeName string
	// RootDir is the agent's root directory: the node's fs is the
	// filesystem that holds it, as the kubelet's is its --root-dir's.
	RootDir string
	// ProcDir is where the node's proc filesystem is read; "" is /proc.
	ProcDir string
	// Now is the clock of the node's samples; nil is time.Now.
	Now func() time.Time
}

// Provider builds the node's stats summary; it keeps the previous CPU
// samples that a usage rate needs. It is safe for concurrent use.
type Provider struct {
	cfg   Config
	rates *cpuRates

	mu sync.Mutex
	// sandboxStatsAfter is when sandbox stats are asked for again after
	// the runtime failed to give them.
	sandboxStatsAfter time.Time
	// noContainerStats is set once the runtime answered that it has no
	// container stats.
	noContainerStats bool
}

// New checks cfg and returns its provider.
func New(cfg Config) (*Provider, error) {
	switch {
	case cfg.Runtime == nil:
		return nil, errors.New("stats: Config.Runtime is nil")
	case cfg.Images == nil:
		return nil, errors.New("stats: Config.Images is nil")
	case cfg.NodeName == "":
		return nil, errors.New("stats: Config.NodeName is empty")
	case cfg.RootDir == "":
		return nil, errors.New("stats: Config.RootDir is empty")
	}
	if cfg.ProcDir == "" {
		cfg.ProcDir = "/proc"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Provider{cfg: cfg, rates: newCPURates()}, nil
}

// ErrNoRuntimeStats is the pods' error when the runtime keeps no stats
// (it answers ListContainerStats with codes.Unimplemented).
var ErrNoRuntimeStats = errors.New("the CRI runtime keeps no container stats (ListContainerStats is unimplemented)")

// Summary is the node's summary, GET /stats/summary (kubelet:
// summaryProviderImpl.Get; with onlyCPUAndMemory, GetCPUAndMemoryStats,
// which metrics-server asks for). When the runtime keeps no stats
// (ErrNoRuntimeStats) it carries the node alone and no error; any other
// failure to read the pods is an error.
func (p *Provider) Summary(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, error) {
	s, podsErr := p.sample(ctx)
	if podsErr != nil && !errors.Is(podsErr, ErrNoRuntimeStats) {
		return nil, podsErr
	}
	if onlyCPUAndMemory {
		s = cpuAndMemory(s)
	}
	return s, nil
}

// ResourceMetrics collects the series of GET /metrics/resource at each
// scrape (kubelet: the resource metrics collector); the kubelet API
// registers it in a registry of its own.
func (p *Provider) ResourceMetrics() prometheus.Collector { return resourceCollector{p: p} }

// cpuAndMemory is s with only the CPU and memory of the node, its pods and
// their containers.
func cpuAndMemory(s *statsapi.Summary) *statsapi.Summary {
	out := &statsapi.Summary{Node: statsapi.NodeStats{
		NodeName: s.Node.NodeName, StartTime: s.Node.StartTime, CPU: s.Node.CPU, Memory: s.Node.Memory,
	}, Pods: make([]statsapi.PodStats, 0, len(s.Pods))}
	for _, pod := range s.Pods {
		trimmed := statsapi.PodStats{PodRef: pod.PodRef, StartTime: pod.StartTime, CPU: pod.CPU, Memory: pod.Memory,
			Containers: make([]statsapi.ContainerStats, 0, len(pod.Containers))}
		for _, c := range pod.Containers {
			trimmed.Containers = append(trimmed.Containers, statsapi.ContainerStats{Name: c.Name, StartTime: c.StartTime, CPU: c.CPU, Memory: c.Memory})
		}
		out.Pods = append(out.Pods, trimmed)
	}
	return out
}

// sample reads the node and its pods. The summary is nil only when the node
// itself cannot be read; podsErr says why the pods are missing from it.
func (p *Provider) sample(ctx context.Context) (s *statsapi.Summary, podsErr error) {
	defer p.rates.prune()
	node, err := p.node(ctx)
	if err != nil {
		return nil, fmt.Errorf("node stats: %w", err)
	}
	pods, err := p.pods(ctx)
	if err != nil {
		podsErr = fmt.Errorf("pod stats: %w", err)
	}
	if pods == nil {
		pods = []statsapi.PodStats{}
	}
	return &statsapi.Summary{Node: *node, Pods: pods}, podsErr
}

// node is the node's own stats: CPU and memory from /proc, its fs from the
// root directory, the runtime's filesystems from ImageFsInfo.
func (p *Provider) node(ctx context.Context) (*statsapi.NodeStats, error) {
	now := p.cfg.Now()
	st, err := readProcStat(p.cfg.ProcDir)
	if err != nil {
		return nil, err
	}
	mem, err := readMeminfo(p.cfg.ProcDir)
	if err != nil {
		return nil, err
	}
	fs, err := statfs(p.cfg.RootDir, now)
	if err != nil {
		return nil, fmt.Errorf("the root directory's filesystem: %w", err)
	}
	busy, ws, usage, anon := st.busy, mem.workingSet(), mem.total-mem.free, mem.anon
	available := mem.total - ws
	node := &statsapi.NodeStats{
		NodeName:  p.cfg.NodeName,
		StartTime: metav1.NewTime(st.boot),
		CPU: &statsapi.CPUStats{
			Time:                 metav1.NewTime(now),
			UsageCoreNanoSeconds: &busy,
			UsageNanoCores:       p.rates.nanoCores("node", now, busy),
		},
		Memory: &statsapi.MemoryStats{
			Time:            metav1.NewTime(now),
			AvailableBytes:  &available,
			UsageBytes:      &usage,
			WorkingSetBytes: &ws,
			RSSBytes:        &anon,
		},
		Fs: fs,
	}
	node.Runtime, err = p.runtimeFs(ctx, now)
	return node, err
}

// runtimeFs is the runtime's image and container filesystems; the
// container filesystem is the image filesystem when the runtime names none
// of its own (kubelet: the CRI provider's ImageFsStats). A runtime that
// names no filesystem (the embedded one keeps its images in memory) has
// none.
func (p *Provider) runtimeFs(ctx context.Context, now time.Time) (*statsapi.RuntimeStats, error) {
	info, err := p.cfg.Images.ImageFsInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("ImageFsInfo: %w", err)
	}
	images := info.GetImageFilesystems()
	if len(images) == 0 {
		return nil, nil
	}
	rs := &statsapi.RuntimeStats{ImageFs: runtimeFs(images[0], now)}
	rs.ContainerFs = rs.ImageFs
	if cfs := info.GetContainerFilesystems(); len(cfs) > 0 {
		rs.ContainerFs = runtimeFs(cfs[0], now)
	}
	return rs, nil
}
