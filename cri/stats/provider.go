package stats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
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

	// refreshes makes one sample at a time, which every caller waiting
	// meanwhile shares; last is the latest, kept for MaxAge.
	refreshes singleflight.Group
	last      *cachedSample
}

// cachedSample is a sample and when it was taken (Config.Now).
type cachedSample struct {
	summary *statsapi.Summary
	podsErr error
	at      time.Time
}

// MaxAge is how long a sample answers /stats/summary and
// /metrics/resource: each sample costs five runtime calls in the read
// lane (which the syncer's status reads share), and a client asking in a
// loop would otherwise make them as fast as it asks. metrics-server and
// Prometheus scrape every 10 s or more.
const MaxAge = 2 * time.Second

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

// sample is the latest sample if it is younger than MaxAge, else a new
// one: one refresh at a time, shared by every caller that asks while it
// runs, each of which waits until its own ctx ends at most. The refresh
// outlives a caller that leaves (bounded by scrapeTimeout) so that the
// others get it. A sample that failed is not kept. The summary is shared:
// callers must not change it.
func (p *Provider) sample(ctx context.Context) (*statsapi.Summary, error) {
	p.mu.Lock()
	last := p.last
	p.mu.Unlock()
	if last != nil && p.cfg.Now().Sub(last.at) < MaxAge {
		return last.summary, last.podsErr
	}
	ch := p.refreshes.DoChan("sample", func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), scrapeTimeout)
		defer cancel()
		s, podsErr := p.sampleNow(ctx)
		c := &cachedSample{summary: s, podsErr: podsErr, at: p.cfg.Now()}
		if s != nil && (podsErr == nil || errors.Is(podsErr, ErrNoRuntimeStats)) {
			p.mu.Lock()
			p.last = c
			p.mu.Unlock()
		}
		return c, nil
	})
	select {
	case r := <-ch:
		c := r.Val.(*cachedSample)
		return c.summary, c.podsErr
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// sampleNow reads the node and its pods. The summary is nil only when the node
// itself cannot be read; podsErr says why the pods are missing from it.
func (p *Provider) sampleNow(ctx context.Context) (s *statsapi.Summary, podsErr error) {
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
