package stats

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// pods is the stats of every pod with a ready sandbox and of its running
// containers (kubelet: criStatsProvider.ListPodStats). A pod whose runtime
// has no sandbox stats for it gets the sum of its containers' (those the
// runtime has stats for).
func (p *Provider) pods(ctx context.Context) ([]statsapi.PodStats, error) {
	p.mu.Lock()
	none := p.noContainerStats
	p.mu.Unlock()
	if none {
		return nil, ErrNoRuntimeStats
	}
	cstats, err := p.cfg.Runtime.ListContainerStats(ctx, &runtimeapi.ContainerStatsFilter{})
	if status.Code(err) == codes.Unimplemented {
		// A runtime gains no method while it runs: asking again would only
		// log the CRI client's error at every scrape.
		p.mu.Lock()
		p.noContainerStats = true
		p.mu.Unlock()
		return nil, ErrNoRuntimeStats
	}
	if err != nil {
		return nil, fmt.Errorf("ListContainerStats: %w", err)
	}
	sandboxes, err := p.cfg.Runtime.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
		State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY},
	})
	if err != nil {
		return nil, fmt.Errorf("ListPodSandbox: %w", err)
	}
	containers, err := p.cfg.Runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
	})
	if err != nil {
		return nil, fmt.Errorf("ListContainers: %w", err)
	}
	sbStats := p.sandboxStats(ctx)

	statsOf := map[string]*runtimeapi.ContainerStats{}
	for _, s := range cstats {
		statsOf[s.GetAttributes().GetId()] = s
	}
	sbStatsOf := map[string]*runtimeapi.PodSandboxStats{}
	for _, s := range sbStats {
		sbStatsOf[s.GetAttributes().GetId()] = s
	}
	inSandbox := map[string][]*runtimeapi.Container{}
	for _, c := range containers {
		inSandbox[c.PodSandboxId] = append(inSandbox[c.PodSandboxId], c)
	}

	var out []statsapi.PodStats
	for _, sb := range newestPerPod(sandboxes) {
		md := sb.GetMetadata()
		ps := statsapi.PodStats{
			PodRef:     statsapi.PodReference{Name: md.GetName(), Namespace: md.GetNamespace(), UID: md.GetUid()},
			StartTime:  metav1.NewTime(time.Unix(0, sb.CreatedAt)),
			Containers: []statsapi.ContainerStats{},
		}
		for _, c := range inSandbox[sb.Id] {
			ps.Containers = append(ps.Containers, p.container(c, statsOf[c.Id]))
		}
		slices.SortFunc(ps.Containers, func(a, b statsapi.ContainerStats) int { return cmp.Compare(a.Name, b.Name) })
		if s := sbStatsOf[sb.Id]; s.GetLinux() != nil {
			ps.CPU = p.cpu("pod/"+sb.Id, s.GetLinux().GetCpu())
			ps.Memory = memory(s.GetLinux().GetMemory())
		} else {
			ps.CPU, ps.Memory = sumCPU(ps.Containers), sumMemory(ps.Containers)
		}
		out = append(out, ps)
	}
	slices.SortFunc(out, func(a, b statsapi.PodStats) int {
		return cmp.Or(cmp.Compare(a.PodRef.Namespace, b.PodRef.Namespace), cmp.Compare(a.PodRef.Name, b.PodRef.Name))
	})
	return out, nil
}

// sandboxRetry is how long the provider goes without asking for sandbox
// stats after the runtime failed to give them: the CRI client logs every
// failure as an error, and containerd 1.6 fails every time for podlife's
// sandboxes.
const sandboxRetry = 10 * time.Minute

// sandboxStats is the runtime's sandbox stats, or none. They are a bonus:
// a runtime may not have them (codes.Unimplemented), and containerd 1.6
// fails the whole list for one sandbox without a cgroup parent (podlife's
// have none: "cgroupPath is empty"). Either way every pod then gets its
// containers' sum.
func (p *Provider) sandboxStats(ctx context.Context) []*runtimeapi.PodSandboxStats {
	now := time.Now()
	p.mu.Lock()
	skip := now.Before(p.sandboxStatsAfter)
	p.mu.Unlock()
	if skip {
		return nil
	}
	stats, err := p.cfg.Runtime.ListPodSandboxStats(ctx, &runtimeapi.PodSandboxStatsFilter{})
	if err == nil {
		return stats
	}
	klog.V(2).InfoS("No sandbox stats: pods get their containers' sum", "retryAfter", sandboxRetry, "err", err)
	p.mu.Lock()
	p.sandboxStatsAfter = now.Add(sandboxRetry)
	p.mu.Unlock()
	return nil
}

// newestPerPod keeps each pod UID's newest sandbox: a pod has one ready
// sandbox but for the moment a new one replaces the old.
func newestPerPod(sandboxes []*runtimeapi.PodSandbox) []*runtimeapi.PodSandbox {
	newest := map[string]*runtimeapi.PodSandbox{}
	for _, sb := range sandboxes {
		uid := sb.GetMetadata().GetUid()
		if cur, ok := newest[uid]; !ok || sb.CreatedAt > cur.CreatedAt {
			newest[uid] = sb
		}
	}
	out := make([]*runtimeapi.PodSandbox, 0, len(newest))
	for _, sb := range newest {
		out = append(out, sb)
	}
	return out
}

// container is one running container's stats. A container the runtime has
// no stats for (yet: one just started) has its name and start only.
func (p *Provider) container(c *runtimeapi.Container, s *runtimeapi.ContainerStats) statsapi.ContainerStats {
	cs := statsapi.ContainerStats{
		Name:      c.GetMetadata().GetName(),
		StartTime: metav1.NewTime(time.Unix(0, c.CreatedAt)),
	}
	if s == nil {
		return cs
	}
	cs.CPU = p.cpu("container/"+c.Id, s.GetCpu())
	cs.Memory = memory(s.GetMemory())
	if wl := s.GetWritableLayer(); wl != nil {
		cs.Rootfs = runtimeFs(wl, time.Unix(0, wl.GetTimestamp()))
	}
	return cs
}

// cpu is a CPU sample with its rate: the runtime's when it gives one, else
// from the previous sample under key.
func (p *Provider) cpu(key string, u *runtimeapi.CpuUsage) *statsapi.CPUStats {
	if u == nil {
		return nil
	}
	at := time.Unix(0, u.Timestamp)
	cs := &statsapi.CPUStats{Time: metav1.NewTime(at)}
	if u.UsageCoreNanoSeconds != nil {
		v := u.UsageCoreNanoSeconds.Value
		cs.UsageCoreNanoSeconds = &v
		cs.UsageNanoCores = p.rates.nanoCores(key, at, v)
	}
	if u.UsageNanoCores != nil {
		v := u.UsageNanoCores.Value
		cs.UsageNanoCores = &v
	}
	return cs
}

// memory is a memory sample as the summary has it.
func memory(m *runtimeapi.MemoryUsage) *statsapi.MemoryStats {
	if m == nil {
		return nil
	}
	ms := &statsapi.MemoryStats{Time: metav1.NewTime(time.Unix(0, m.Timestamp))}
	for dst, src := range map[**uint64]*runtimeapi.UInt64Value{
		&ms.WorkingSetBytes: m.WorkingSetBytes, &ms.UsageBytes: m.UsageBytes, &ms.AvailableBytes: m.AvailableBytes,
		&ms.RSSBytes: m.RssBytes, &ms.PageFaults: m.PageFaults, &ms.MajorPageFaults: m.MajorPageFaults,
	} {
		if src != nil {
			v := src.Value
			*dst = &v
		}
	}
	return ms
}

// sumCPU is the pod's CPU as the sum of its containers' (nil when none has
// any), at the newest of their sample times. The rate is summed only when
// every container has one: a partial sum would understate the pod.
func sumCPU(cs []statsapi.ContainerStats) *statsapi.CPUStats {
	var sum *statsapi.CPUStats
	var total, cores uint64
	allRates := true
	for _, c := range cs {
		if c.CPU == nil || c.CPU.UsageCoreNanoSeconds == nil {
			continue
		}
		if sum == nil || c.CPU.Time.After(sum.Time.Time) {
			sum = &statsapi.CPUStats{Time: c.CPU.Time}
		}
		total += *c.CPU.UsageCoreNanoSeconds
		if c.CPU.UsageNanoCores == nil {
			allRates = false
		} else {
			cores += *c.CPU.UsageNanoCores
		}
	}
	if sum == nil {
		return nil
	}
	sum.UsageCoreNanoSeconds = &total
	if allRates {
		sum.UsageNanoCores = &cores
	}
	return sum
}

// sumMemory is the pod's memory as the sum of its containers' working set,
// usage and RSS (nil when none has any).
func sumMemory(cs []statsapi.ContainerStats) *statsapi.MemoryStats {
	var sum *statsapi.MemoryStats
	var ws, usage, rss uint64
	for _, c := range cs {
		m := c.Memory
		if m == nil || m.WorkingSetBytes == nil {
			continue
		}
		if sum == nil || m.Time.After(sum.Time.Time) {
			sum = &statsapi.MemoryStats{Time: m.Time}
		}
		ws += *m.WorkingSetBytes
		usage += deref(m.UsageBytes)
		rss += deref(m.RSSBytes)
	}
	if sum == nil {
		return nil
	}
	sum.WorkingSetBytes, sum.UsageBytes, sum.RSSBytes = &ws, &usage, &rss
	return sum
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}
