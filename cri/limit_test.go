package cri_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakecri "k8s.io/cri-api/pkg/apis/testing"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/crifake"
)

// blockingStops is the fake runtime with a RemoveContainer (a change)
// that reports its entry and waits until release is closed, counting the
// removals in flight,
// and a PodSandboxStatus (a read) that blocks the same way.
type blockingStops struct {
	*fakecri.FakeRuntimeService
	entered      chan string
	release      chan struct{}
	inFlight     atomic.Int32
	maxSeen      atomic.Int32
	readsEntered chan string
}

func (r *blockingStops) PodSandboxStatus(_ context.Context, id string, _ bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	r.readsEntered <- id
	<-r.release
	return &runtimeapi.PodSandboxStatusResponse{}, nil
}

func (r *blockingStops) RemoveContainer(_ context.Context, id string) error {
	n := r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	for {
		seen := r.maxSeen.Load()
		if n <= seen || r.maxSeen.CompareAndSwap(seen, n) {
			break
		}
	}
	r.entered <- id
	<-r.release
	return nil
}

// At most n calls that change the runtime are in flight; the others wait
// for a slot (or their context) and all end once the first ones do. Reads
// have a lane of their own: a list completes while every change slot is
// held by a stop that blocks. The poll has its own: it completes while
// both lanes are full.
func TestLimitBoundsCallsAndKeepsReadsFlowing(t *testing.T) {
	const limit, stops = 3, 20
	rt := &blockingStops{
		FakeRuntimeService: fakecri.NewFakeRuntimeService(),
		entered:            make(chan string, stops), readsEntered: make(chan string, limit), release: make(chan struct{}),
	}
	l := cri.Limit(rt, fakecri.NewFakeImageService(), cri.Lanes{Changes: limit})
	limited := l.Runtime
	ctx := context.Background()

	var wg sync.WaitGroup
	errs := make([]error, stops)
	for i := range stops {
		wg.Go(func() { errs[i] = limited.RemoveContainer(ctx, fmt.Sprintf("c%d", i)) })
	}
	for range limit {
		crifake.WaitFor(t, rt.entered, "a stop to reach the runtime")
	}
	// Every change slot is held: reads still go through.
	if _, err := limited.ListPodSandbox(ctx, nil); err != nil {
		t.Fatalf("ListPodSandbox while stops block: %v", err)
	}
	if _, err := limited.ListContainers(ctx, nil); err != nil {
		t.Fatalf("ListContainers while stops block: %v", err)
	}
	// A change that waits for a slot gives up when its context ends.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := limited.RemoveContainer(cancelled, "late"); !errors.Is(err, context.Canceled) {
		t.Errorf("RemoveContainer with a cancelled context while waiting = %v, want context.Canceled", err)
	}
	if n := rt.inFlight.Load(); n != limit {
		t.Errorf("%d stops in the runtime while the first ones block, want %d", n, limit)
	}
	// The reads lane full too: the poll still reads.
	for i := range limit {
		wg.Go(func() { _, _ = limited.PodSandboxStatus(ctx, fmt.Sprintf("s%d", i), false) })
	}
	for range limit {
		crifake.WaitFor(t, rt.readsEntered, "a read to reach the runtime")
	}
	if _, err := limited.ListPodSandbox(cancelled, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("ListPodSandbox with a cancelled context while the reads lane is full = %v, want context.Canceled", err)
	}
	if _, err := l.Poll.ListPodSandbox(ctx, nil); err != nil {
		t.Fatalf("the poll's ListPodSandbox while both lanes are full: %v", err)
	}

	close(rt.release)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("stop %d: %v", i, err)
		}
	}
	if len(rt.entered) != stops-limit {
		t.Errorf("%d stops reached the runtime, want %d", len(rt.entered)+limit, stops)
	}
	if n := rt.maxSeen.Load(); n != limit {
		t.Errorf("at most %d stops were in flight at once, want %d", n, limit)
	}
}

// Every method of both services goes through the limiter to the wrapped
// service, with its arguments and results.
func TestLimitPassesCallsThrough(t *testing.T) {
	fake := fakecri.NewFakeRuntimeService()
	images := fakecri.NewFakeImageService()
	l := cri.Limit(fake, images, cri.Lanes{Changes: 1, ExecPerPod: 1, ExecPerNode: 1, Pulls: 1})
	rt, img := l.Runtime, l.Images
	ctx := context.Background()
	sbCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "u"}}
	sb, err := rt.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := img.PullImage(ctx, &runtimeapi.ImageSpec{Image: "img"}, nil, sbCfg); err != nil {
		t.Fatal(err)
	}
	if resp, err := img.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: "img"}, false); err != nil || resp.GetImage() == nil {
		t.Fatalf("ImageStatus = %v, %v", resp, err)
	}
	c, err := rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "c"}, Image: &runtimeapi.ImageSpec{Image: "img"}}, sbCfg)
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { return rt.StartContainer(ctx, c) },
		func() error {
			_, err := rt.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: c, Cmd: []string{"sh"}, Stdout: true})
			return err
		},
		func() error {
			_, err := rt.Attach(ctx, &runtimeapi.AttachRequest{ContainerId: c, Stdout: true})
			return err
		},
		func() error {
			_, err := rt.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: sb})
			return err
		},
		func() error { _, err := rt.ContainerStatus(ctx, c, false); return err },
		func() error { _, err := rt.PodSandboxStatus(ctx, sb, false); return err },
		func() error { return rt.StopContainer(ctx, c, 1) },
		func() error { return rt.RemoveContainer(ctx, c) },
		func() error { return rt.StopPodSandbox(ctx, sb) },
		func() error { return rt.RemovePodSandbox(ctx, sb) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := []string{"RunPodSandbox", "CreateContainer", "StartContainer", "Exec", "Attach", "PortForward", "ContainerStatus", "PodSandboxStatus", "StopContainer", "RemoveContainer", "StopPodSandbox", "RemovePodSandbox"}
	if got := fake.GetCalls(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("runtime calls %v, want %v", got, want)
	}
	if sbs, err := rt.ListPodSandbox(ctx, nil); err != nil || len(sbs) != 0 {
		t.Errorf("ListPodSandbox = %v, %v", sbs, err)
	}
	if cs, err := rt.ListContainers(ctx, nil); err != nil || len(cs) != 0 {
		t.Errorf("ListContainers = %v, %v", cs, err)
	}
	fake.SetFakeContainerStats([]*runtimeapi.ContainerStats{{Attributes: &runtimeapi.ContainerAttributes{Id: "gone"}}})
	if cs, err := rt.ListContainerStats(ctx, nil); err != nil || len(cs) != 0 {
		t.Errorf("ListContainerStats = %v, %v; want none (no container is listed)", cs, err)
	}
	if ss, err := rt.ListPodSandboxStats(ctx, nil); err != nil || len(ss) != 0 {
		t.Errorf("ListPodSandboxStats = %v, %v", ss, err)
	}
	images.FakeFilesystemUsage = []*runtimeapi.FilesystemUsage{{FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "/images"}}}
	if fs, err := img.ImageFsInfo(ctx); err != nil || len(fs.GetImageFilesystems()) != 1 || fs.ImageFilesystems[0].FsId.Mountpoint != "/images" {
		t.Errorf("ImageFsInfo = %v, %v", fs, err)
	}
	if got, want := fake.GetCalls()[len(fake.GetCalls())-2:], []string{"ListContainerStats", "ListPodSandboxStats"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("last runtime calls %v, want %v", got, want)
	}
}
