package kuberuntime

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/podplan"
	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/internal/crifake"
)

// The plan must cost less than one CRI call: BenchmarkComputePodActions
// plans a pod with a sidecar, an init container and three regular
// containers (one in back-off) beside a dead sandbox's leftovers;
// BenchmarkCRIContainerStatus is one ContainerStatus call to the embedded
// runtime through the CRI client, as readPod makes one per container.

func BenchmarkComputePodActions(b *testing.B) {
	pod := crifake.WithInits(crifake.MakePod("p", v1.RestartPolicyAlways,
		crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"}, crifake.Ctr{Name: "c"}),
		crifake.Init{Name: "sc", Sidecar: true}, crifake.Init{Name: "i1"})
	sandboxes := []*runtimeapi.PodSandbox{
		{Id: "s1", State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: 2, Metadata: &runtimeapi.PodSandboxMetadata{Attempt: 1}},
		{Id: "s0", State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, CreatedAt: 1, Metadata: &runtimeapi.PodSandboxMetadata{}},
	}
	inst := func(id, sb, name string, state runtimeapi.ContainerState, exit int32, at int64) func() (*runtimeapi.ContainerStatus, string) {
		return crifake.Instance(id, sb, name, 0, state, exit, at)
	}
	view := crifake.RuntimePod(sandboxes,
		inst("c1", "s1", "c", crifake.Exited, 1, 9), inst("b1", "s1", "b", crifake.Running, 0, 8), inst("a1", "s1", "a", crifake.Running, 0, 7),
		inst("i1", "s1", "i1", crifake.Exited, 0, 6), inst("sc1", "s1", "sc", crifake.Running, 0, 5),
		inst("a0", "s0", "a", crifake.Exited, 137, 4), inst("i0", "s0", "i1", crifake.Exited, 0, 2), inst("sc0", "s0", "sc", crifake.Exited, 137, 1))
	in := &podplan.Input{
		Pod: pod, View: view, Now: time.Unix(100, 0),
		Started:     func(*v1.Container, *runtimeapi.ContainerStatus) bool { return true },
		FailedProbe: func(string) (prober.Kind, bool) { return 0, false },
		Backoff:     func(string, time.Time) time.Duration { return 10 * time.Second },
	}
	if a := podplan.ComputePodActions(in); !a.Initialized || len(a.Init) != 0 || len(a.Containers) != 1 || a.Containers[0].String() != "c back-off" || len(a.Ignored) != 3 {
		b.Fatalf("plan %+v", a)
	}
	b.ReportAllocs()
	for b.Loop() {
		podplan.ComputePodActions(in)
	}
}

func BenchmarkCRIContainerStatus(b *testing.B) {
	_, rt, images := embeddedClients(b)
	s := NewSyncer(rt, images, Options{})
	defer s.Close()
	ctx := context.Background()
	pod := crifake.MakePod("bench", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	if _, err := s.SyncPod(ctx, 0, pod, nil, nil); err != nil {
		b.Fatalf("SyncPod: %v", err)
	}
	listed, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{cri.PodUIDLabel: string(pod.UID)}})
	if err != nil || len(listed) != 1 {
		b.Fatalf("ListContainers = %v, %v", listed, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.ContainerStatus(ctx, listed[0].Id, false); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := s.SyncTerminatingPod(ctx, pod, nil, nil, nil); err != nil {
		b.Fatal(err)
	}
}
