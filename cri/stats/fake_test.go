package stats

import (
	"context"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakecri "k8s.io/cri-api/pkg/apis/testing"
)

// t0 is the fake node's clock and the time of the runtime's first samples.
var t0 = time.Unix(1764000600, 0)

// fakeNode is a fake runtime with pods in it, and a provider reading it
// with /proc from testdata.
type fakeNode struct {
	rt     *fakecri.FakeRuntimeService
	images *fakecri.FakeImageService
	p      *Provider
	now    time.Time
	ids    map[string]string // "pod" or "pod/container" → sandbox or container ID
}

func newFakeNode(t *testing.T) *fakeNode {
	t.Helper()
	n := &fakeNode{rt: fakecri.NewFakeRuntimeService(), images: fakecri.NewFakeImageService(), now: t0, ids: map[string]string{}}
	p, err := New(Config{Runtime: n.rt, Images: n.images, NodeName: "node-a", RootDir: t.TempDir(), ProcDir: "testdata/proc", Now: func() time.Time { return n.now }})
	if err != nil {
		t.Fatal(err)
	}
	n.p = p
	return n
}

// runPod runs a ready sandbox for pod ns/name with running containers,
// created at the given seconds after t0 (the sandbox at 0).
func (n *fakeNode) runPod(t *testing.T, ns, name, uid string, containers ...string) {
	t.Helper()
	ctx := context.Background()
	cfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: ns, Uid: uid}}
	sb, err := n.rt.RunPodSandbox(ctx, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	n.rt.Sandboxes[sb].CreatedAt = t0.Add(-time.Minute).UnixNano()
	n.ids[name] = sb
	for i, c := range containers {
		id, err := n.rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: c}, Image: &runtimeapi.ImageSpec{Image: "busybox"}}, cfg)
		if err == nil {
			err = n.rt.StartContainer(ctx, id)
		}
		if err != nil {
			t.Fatal(err)
		}
		n.rt.Containers[id].CreatedAt = t0.Add(-time.Minute + time.Duration(i+1)*time.Second).UnixNano()
		n.ids[name+"/"+c] = id
	}
}

// cpu and mem are CRI samples taken at t0+at.
func cpu(at time.Duration, usage uint64, nanoCores *uint64) *runtimeapi.CpuUsage {
	u := &runtimeapi.CpuUsage{Timestamp: t0.Add(at).UnixNano(), UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: usage}}
	if nanoCores != nil {
		u.UsageNanoCores = &runtimeapi.UInt64Value{Value: *nanoCores}
	}
	return u
}

func mem(at time.Duration, workingSet uint64) *runtimeapi.MemoryUsage {
	return &runtimeapi.MemoryUsage{
		Timestamp:       t0.Add(at).UnixNano(),
		WorkingSetBytes: &runtimeapi.UInt64Value{Value: workingSet},
		UsageBytes:      &runtimeapi.UInt64Value{Value: workingSet + 1000},
		RssBytes:        &runtimeapi.UInt64Value{Value: workingSet / 2},
	}
}

// containerStats sets the runtime's stats of the named containers
// ("pod/container") to one sample each at t0+at.
func (n *fakeNode) containerStats(at time.Duration, usage map[string]uint64, given map[string]uint64) {
	var stats []*runtimeapi.ContainerStats
	for key, u := range usage {
		var nc *uint64
		if v, ok := given[key]; ok {
			nc = &v
		}
		stats = append(stats, &runtimeapi.ContainerStats{
			Attributes: &runtimeapi.ContainerAttributes{Id: n.ids[key]},
			Cpu:        cpu(at, u, nc),
			Memory:     mem(at, u/1000),
		})
	}
	n.rt.SetFakeContainerStats(stats)
}

func (n *fakeNode) sandboxStats(at time.Duration, usage map[string]uint64) {
	var stats []*runtimeapi.PodSandboxStats
	for pod, u := range usage {
		stats = append(stats, &runtimeapi.PodSandboxStats{
			Attributes: &runtimeapi.PodSandboxAttributes{Id: n.ids[pod]},
			Linux:      &runtimeapi.LinuxPodSandboxStats{Cpu: cpu(at, u, nil), Memory: mem(at, u/1000)},
		})
	}
	n.rt.SetFakePodSandboxStats(stats)
}
