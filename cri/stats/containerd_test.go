package stats_test

// The stats of a real containerd: a busybox container that burns a CPU
// and holds 20 MB in a shell variable shows a nonzero CPU rate and a
// working set of at least that. It skips unless $PODLIFE_CRI_ENDPOINT names
// a runtime (internal/critest):
//
//	PODLIFE_CRI_ENDPOINT=unix:///…/containerd.sock go test -count=1 -run Containerd ./cri/stats/

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/podlife/podlife/cri/stats"
	"github.com/podlife/podlife/internal/critest"
)

func TestContainerdStatsOfABusyContainer(t *testing.T) {
	critest.Exclusive(t)
	rt, images := critest.Connect(t)
	ctx := t.Context()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	uid := "stats-" + hex.EncodeToString(b)
	sbCfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "burn", Namespace: "podlife-stats-it", Uid: uid},
		Hostname:     "burn",
		LogDirectory: t.TempDir(),
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD},
		}},
	}
	sb, err := rt.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := rt.StopPodSandbox(ctx, sb); err != nil {
			t.Errorf("cleanup: StopPodSandbox: %v", err)
		}
		if err := rt.RemovePodSandbox(ctx, sb); err != nil {
			t.Errorf("cleanup: RemovePodSandbox: %v", err)
		}
	})
	const held = 20_000_000
	id, err := rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "burner"},
		Image:    &runtimeapi.ImageSpec{Image: critest.BusyboxImage},
		Command:  []string{"sh", "-c", `x=$(head -c 20000000 /dev/zero | tr '\0' a); while :; do :; done`},
		LogPath:  "burner.log",
	}, sbCfg)
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}

	p, err := stats.New(stats.Config{Runtime: rt, Images: images, NodeName: "ctrd-node", RootDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// The rate needs two samples, and the runtime's own cache may serve
	// the same one twice: sample until the container has a rate and has
	// filled its variable, for at most a minute.
	var pod *statsapi.PodStats
	var ctr *statsapi.ContainerStats
	deadline := time.Now().Add(time.Minute)
	for {
		s, err := p.Summary(ctx, false)
		if err != nil {
			t.Fatalf("Summary: %v", err)
		}
		pod, ctr = find(s, uid, "burner")
		if ctr != nil && ctr.CPU != nil && ctr.CPU.UsageNanoCores != nil && *ctr.CPU.UsageNanoCores > 0 &&
			ctr.Memory != nil && ctr.Memory.WorkingSetBytes != nil && *ctr.Memory.WorkingSetBytes >= held {
			t.Logf("node: %d nanocores of %d core-ns, working set %d", deref(s.Node.CPU.UsageNanoCores), *s.Node.CPU.UsageCoreNanoSeconds, *s.Node.Memory.WorkingSetBytes)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute the burner's stats are %+v (pod %+v), want a CPU rate above 0 and a working set of at least %d", ctr, pod, held)
		}
		time.Sleep(time.Second)
	}
	t.Logf("burner: %d nanocores, %d core-ns, working set %d bytes, started %v", *ctr.CPU.UsageNanoCores, *ctr.CPU.UsageCoreNanoSeconds, *ctr.Memory.WorkingSetBytes, ctr.StartTime)
	if pod.PodRef.Name != "burn" || pod.PodRef.Namespace != "podlife-stats-it" {
		t.Errorf("pod ref %+v", pod.PodRef)
	}
	if pod.CPU == nil || pod.CPU.UsageCoreNanoSeconds == nil || *pod.CPU.UsageCoreNanoSeconds < *ctr.CPU.UsageCoreNanoSeconds/2 ||
		pod.Memory == nil || pod.Memory.WorkingSetBytes == nil || *pod.Memory.WorkingSetBytes < held {
		t.Errorf("pod CPU %+v memory %+v: want at least the burner's", pod.CPU, pod.Memory)
	}
	t.Logf("pod: %d core-ns, working set %d bytes", *pod.CPU.UsageCoreNanoSeconds, *pod.Memory.WorkingSetBytes)

	body := []byte(scrape(t, p.ResourceMetrics()))
	for _, re := range []string{
		`(?m)^container_cpu_usage_seconds_total\{container="burner",namespace="podlife-stats-it",pod="burn"\} [0-9.e+]+ [0-9]+$`,
		`(?m)^container_memory_working_set_bytes\{container="burner",namespace="podlife-stats-it",pod="burn"\} [0-9.e+]+ [0-9]+$`,
		`(?m)^container_start_time_seconds\{container="burner",namespace="podlife-stats-it",pod="burn"\} [0-9.e+]+ [0-9]+$`,
		`(?m)^node_cpu_usage_seconds_total [0-9.e+]+ [0-9]+$`,
		`(?m)^resource_scrape_error 0$`,
	} {
		if !regexp.MustCompile(re).Match(body) {
			t.Errorf("resource metrics lack %s:\n%s", re, body)
		}
	}
	for _, line := range regexp.MustCompile(`(?m)^(container|pod)_.*"burn.*$`).FindAll(body, -1) {
		t.Logf("%s", line)
	}
}

// find is the pod of uid in s and its named container.
func find(s *statsapi.Summary, uid, name string) (*statsapi.PodStats, *statsapi.ContainerStats) {
	for i := range s.Pods {
		if s.Pods[i].PodRef.UID != uid {
			continue
		}
		for j := range s.Pods[i].Containers {
			if s.Pods[i].Containers[j].Name == name {
				return &s.Pods[i], &s.Pods[i].Containers[j]
			}
		}
		return &s.Pods[i], nil
	}
	return nil, nil
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}
