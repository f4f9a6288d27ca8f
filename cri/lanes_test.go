package cri_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakecri "k8s.io/cri-api/pkg/apis/testing"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/crifake"
)

// hanging is the fake runtime and image service where an ExecSync whose
// command is "hang", a PullImage and a CreateContainer of a container
// named "hang" report their entry and then wait until their context ends
// (forever, unless it has a deadline, or release is closed). It counts
// the execs in flight, and records the deadline each call saw.
type hanging struct {
	*fakecri.FakeRuntimeService
	*fakecri.FakeImageService
	entered chan string
	release chan struct{}

	execs, maxExecs atomic.Int32
	mu              sync.Mutex
	deadlines       map[string]time.Duration // by call, from the call's entry
}

func newHanging() *hanging {
	return &hanging{
		FakeRuntimeService: fakecri.NewFakeRuntimeService(), FakeImageService: fakecri.NewFakeImageService(),
		entered: make(chan string, 100), release: make(chan struct{}), deadlines: map[string]time.Duration{},
	}
}

// hold reports what entered and blocks until ctx ends or release.
func (h *hanging) hold(ctx context.Context, what string) error {
	h.entered <- what
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-h.release:
		return nil
	}
}

func (h *hanging) sawDeadline(ctx context.Context, call string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d, ok := ctx.Deadline(); ok {
		h.deadlines[call] = time.Until(d)
	} else {
		h.deadlines[call] = -1
	}
}

func (h *hanging) deadline(call string) (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := h.deadlines[call]
	return d, ok && d >= 0
}

func (h *hanging) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	h.sawDeadline(ctx, fmt.Sprintf("ExecSync %s %v %s", id, cmd, timeout))
	if cmd[0] != "hang" {
		return []byte("ok"), nil, nil
	}
	n := h.execs.Add(1)
	defer h.execs.Add(-1)
	for {
		seen := h.maxExecs.Load()
		if n <= seen || h.maxExecs.CompareAndSwap(seen, n) {
			break
		}
	}
	return nil, nil, h.hold(ctx, "exec "+id)
}

func (h *hanging) PullImage(ctx context.Context, image *runtimeapi.ImageSpec, _ *runtimeapi.AuthConfig, _ *runtimeapi.PodSandboxConfig) (string, error) {
	h.sawDeadline(ctx, "PullImage "+image.Image)
	return "", h.hold(ctx, "pull "+image.Image)
}

func (h *hanging) CreateContainer(ctx context.Context, sb string, cfg *runtimeapi.ContainerConfig, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	if cfg.GetMetadata().GetName() == "hang" {
		return "", h.hold(ctx, "create")
	}
	return h.FakeRuntimeService.CreateContainer(ctx, sb, cfg, sbCfg)
}

func (h *hanging) StopContainer(ctx context.Context, id string, timeout int64) error {
	h.sawDeadline(ctx, fmt.Sprintf("StopContainer %s %d", id, timeout))
	return nil
}

func (h *hanging) StopPodSandbox(ctx context.Context, id string) error {
	h.sawDeadline(ctx, "StopPodSandbox "+id)
	if strings.HasPrefix(id, "hang") {
		return h.hold(ctx, "sandbox stop "+id)
	}
	return nil
}

// hangExec starts an exec of pod uid's container id that hangs.
func hangExec(wg *sync.WaitGroup, rt cri.Runtime, uid types.UID, id string) {
	wg.Go(func() { _, _, _ = rt.ExecSync(cri.ForPod(context.Background(), uid), id, []string{"hang"}, 0) })
}

// noneEntered fails unless nothing more entered the runtime by now.
func noneEntered(t *testing.T, h *hanging, what string) {
	t.Helper()
	select {
	case got := <-h.entered:
		t.Errorf("%s: %q reached the runtime", what, got)
	default:
	}
}

// With every exec slot of the node, every pull slot and every change slot
// held by calls that never end, a kill of another pod still goes through:
// its preStop hook's exec (under cri.ForKill), its container stops and its
// sandbox stop.
func TestLanesKillWaitsForNothing(t *testing.T) {
	h := newHanging()
	l := cri.Limit(h, h, cri.Lanes{Changes: 2, ExecPerPod: 2, ExecPerNode: 4, Pulls: 1, PullDeadline: time.Hour})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(h.release)
	// Pods a and b fill the node's exec slots; a's third waits.
	for _, uid := range []types.UID{"a", "a", "b", "b", "a"} {
		hangExec(&wg, l.Runtime, uid, "c-"+string(uid))
	}
	wg.Go(func() {
		_, _ = l.Images.PullImage(context.Background(), &runtimeapi.ImageSpec{Image: "never"}, nil, nil)
	})
	wg.Go(func() {
		_, _ = l.Images.PullImage(context.Background(), &runtimeapi.ImageSpec{Image: "queued"}, nil, nil)
	})
	for range 2 {
		wg.Go(func() {
			_, _ = l.Runtime.CreateContainer(context.Background(), "sb", &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "hang"}}, nil)
		})
	}
	for range 4 + 1 + 2 {
		crifake.WaitFor(t, h.entered, "the hanging calls to reach the runtime")
	}
	noneEntered(t, h, "the third exec of pod a, the queued pull")

	ctx, cancel := context.WithTimeout(cri.ForKill(cri.ForPod(t.Context(), "victim")), 30*time.Second)
	defer cancel()
	if out, _, err := l.Runtime.ExecSync(ctx, "victim-app", []string{"sleep", "1"}, 0); err != nil || string(out) != "ok" {
		t.Fatalf("the victim's preStop exec = %q, %v; want it run while every exec slot is held", out, err)
	}
	for i := range 10 {
		if err := l.Runtime.StopContainer(ctx, fmt.Sprintf("victim-%d", i), 30); err != nil {
			t.Fatalf("StopContainer of the victim: %v", err)
		}
	}
	if err := l.Runtime.StopPodSandbox(ctx, "victim-sb"); err != nil {
		t.Fatalf("StopPodSandbox of the victim: %v", err)
	}
	if n := h.execs.Load(); n != 4 {
		t.Errorf("%d hanging execs in the runtime, want the node's 4", n)
	}
}

// While a kill call runs (here a preStop hook's exec that hangs), sandbox
// stops run one at a time, so that the runtime's work for kills comes
// first; once the kill returns, the ones waiting run at once.
func TestLanesSandboxStopsYieldToKills(t *testing.T) {
	h := newHanging()
	l := cri.Limit(h, h, cri.Lanes{Changes: 10})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(h.release)
	kill, endKill := context.WithCancel(cri.ForKill(context.Background()))
	defer endKill()
	killDone := make(chan struct{})
	wg.Go(func() {
		defer close(killDone)
		_, _, _ = l.Runtime.ExecSync(kill, "dying-app", []string{"hang"}, 0)
	})
	crifake.WaitFor(t, h.entered, "the preStop hook to reach the runtime")
	for i := range 3 {
		wg.Go(func() { _ = l.Runtime.StopPodSandbox(context.Background(), fmt.Sprintf("hang-%d", i)) })
	}
	crifake.WaitFor(t, h.entered, "one sandbox stop to reach the runtime while the kill runs")
	time.Sleep(50 * time.Millisecond) // time for a wrongly admitted stop to arrive
	noneEntered(t, h, "a second sandbox stop while the kill runs")
	endKill()
	<-killDone
	for range 2 {
		crifake.WaitFor(t, h.entered, "the other sandbox stops to run once the kill returned")
	}
}

// Sandbox stops yield to kills for KillFirstYield at most: with a kill
// that never ends (a day-long grace period), the stops that waited run
// once the yield is over, while the kill still runs.
func TestLanesSandboxStopsYieldForABoundedTime(t *testing.T) {
	h := newHanging()
	l := cri.Limit(h, h, cri.Lanes{Changes: 10, KillFirstYield: 100 * time.Millisecond})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(h.release)
	wg.Go(func() {
		_, _, _ = l.Runtime.ExecSync(cri.ForKill(context.Background()), "dying-app", []string{"hang"}, 0)
	})
	crifake.WaitFor(t, h.entered, "the day-long preStop hook to reach the runtime")
	for i := range 3 {
		wg.Go(func() { _ = l.Runtime.StopPodSandbox(context.Background(), fmt.Sprintf("hang-%d", i)) })
	}
	// WaitFor's deadline is generous: the stops run 100 ms in, or, when
	// they wait for the kill, never here.
	for range 3 {
		crifake.WaitFor(t, h.entered, "every sandbox stop to run, the kill still running, once it yielded")
	}
}

// A pod's execs that hang hold its own share of the exec lane: its next
// exec waits, another pod's runs. Past the node's cap, the pods at or over
// their fair share (the node's slots over the pods that exec) wait, a pod
// under it does not; once the hung calls end, the waiting ones run.
func TestLanesExecSharePerPodAndNode(t *testing.T) {
	const perPod, perNode = 2, 5
	h := newHanging()
	l := cri.Limit(h, h, cri.Lanes{Changes: 1, ExecPerPod: perPod, ExecPerNode: perNode})
	var wg sync.WaitGroup

	for range perPod + 3 {
		hangExec(&wg, l.Runtime, "greedy", "greedy-app")
	}
	for range perPod {
		crifake.WaitFor(t, h.entered, "the greedy pod's execs to reach the runtime")
	}
	noneEntered(t, h, "the greedy pod beyond its share")
	// Another pod's exec runs, and so does an exec attributed to no pod
	// (its container's own share).
	if out, _, err := l.Runtime.ExecSync(cri.ForPod(t.Context(), "other"), "other-app", []string{"true"}, time.Second); err != nil || string(out) != "ok" {
		t.Fatalf("another pod's exec = %q, %v", out, err)
	}
	if _, _, err := l.Runtime.ExecSync(t.Context(), "loose", []string{"true"}, time.Second); err != nil {
		t.Fatalf("an exec of no pod: %v", err)
	}
	// p1 hangs two execs: the node's cap (5) is nearly reached (greedy 2,
	// p1 2); p2's first reaches it. p2's second waits: with 3 pods, each
	// one's fair share is 1, and all are at or over it.
	for _, uid := range []types.UID{"p1", "p1", "p2"} {
		hangExec(&wg, l.Runtime, uid, "app-"+string(uid))
	}
	for range 3 {
		crifake.WaitFor(t, h.entered, "the other pods' execs to reach the runtime")
	}
	hangExec(&wg, l.Runtime, "p2", "app-p2")
	time.Sleep(50 * time.Millisecond) // time for a wrongly admitted exec to arrive
	noneEntered(t, h, "an exec past the node's cap of a pod at its fair share")
	// A new pod is under its share: its exec runs past the cap.
	if out, _, err := l.Runtime.ExecSync(cri.ForPod(t.Context(), "new"), "new-app", []string{"true"}, time.Second); err != nil || string(out) != "ok" {
		t.Fatalf("a new pod's exec past the node's cap = %q, %v; want it run", out, err)
	}
	cancelled, cancel := context.WithCancel(cri.ForPod(t.Context(), "p1"))
	cancel()
	if _, _, err := l.Runtime.ExecSync(cancelled, "app-p1", []string{"true"}, time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("an exec waiting past its pod's share with its context cancelled = %v, want context.Canceled", err)
	}
	close(h.release)
	wg.Wait()
	if got := len(h.entered); got != 3+1 {
		t.Errorf("%d execs reached the runtime after the release, want the 4 that waited", got)
	}
	if n := h.maxExecs.Load(); n != perNode {
		t.Errorf("at most %d hanging execs were in the runtime at once, want the node's cap %d", n, perNode)
	}
}

// The issue-30 attack: eight pods whose exec probes hang hold the node's
// 32 exec slots (4 each). A ninth pod's postStart hook and readiness probe
// still run at once, while the eight still hang: on a lane that only
// counts slots they waited until their own deadline ran out.
func TestLanesEightHangingPodsLeaveRoomForANinth(t *testing.T) {
	h := newHanging()
	l := cri.Limit(h, h, cri.Lanes{Changes: 1, ExecPerPod: cri.DefaultExecPerPod, ExecPerNode: cri.DefaultExecPerNode})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(h.release)
	for i := range 8 {
		for range cri.DefaultExecPerPod + 1 { // one more than the share: it waits
			hangExec(&wg, l.Runtime, types.UID(fmt.Sprintf("hung-%d", i)), fmt.Sprintf("hung-%d", i))
		}
	}
	for range cri.DefaultExecPerNode {
		crifake.WaitFor(t, h.entered, "the hung pods' execs to reach the runtime")
	}
	// Generous: the calls run at once, or wait until the hung ones end,
	// which is never here.
	ctx, cancel := context.WithTimeout(cri.ForPod(t.Context(), "new"), 30*time.Second)
	defer cancel()
	for _, call := range []struct {
		what    string
		timeout time.Duration
	}{{"postStart hook", 0}, {"readiness probe", time.Second}} {
		if out, _, err := l.Runtime.ExecSync(ctx, "new-app", []string{"true"}, call.timeout); err != nil || string(out) != "ok" {
			t.Fatalf("the new pod's %s while eight pods hang every exec slot = %q, %v; want it run", call.what, out, err)
		}
	}
	noneEntered(t, h, "a hung pod's exec beyond its share")
}

// Every call reaches the runtime with a deadline: an ExecSync without a
// timeout (a hook) and a PullImage too, which the CRI client leaves
// unbounded. A caller's deadline wins where it has one (a preStop hook's
// grace period); a probe's exec ends at its timeout and a margin; a pull
// at the pull deadline, whatever the caller's context says, and the error
// says so.
func TestLanesGiveEveryCallADeadline(t *testing.T) {
	h := newHanging()
	close(h.release)
	const pullDeadline = 7 * time.Minute
	l := cri.Limit(h, h, cri.Lanes{Changes: 1, ExecPerPod: 1, ExecPerNode: 1, Pulls: 1, PullDeadline: pullDeadline})
	graceCtx, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	tests := []struct {
		name, call string
		run        func()
		min, max   time.Duration
	}{
		{"hook exec, no deadline", "ExecSync c [true] 0s", func() { _, _, _ = l.Runtime.ExecSync(t.Context(), "c", []string{"true"}, 0) },
			cri.CallTimeout - time.Minute, cri.CallTimeout},
		{"preStop exec under its grace", "ExecSync p [true] 0s", func() { _, _, _ = l.Runtime.ExecSync(cri.ForKill(graceCtx), "p", []string{"true"}, 0) },
			time.Hour - time.Minute, time.Hour},
		{"probe exec", "ExecSync c [true] 3s", func() { _, _, _ = l.Runtime.ExecSync(t.Context(), "c", []string{"true"}, 3*time.Second) },
			3 * time.Second, 3*time.Second + cri.ExecTimeoutMargin},
		{"probe exec, a longer caller deadline", "ExecSync d [true] 3s", func() { _, _, _ = l.Runtime.ExecSync(graceCtx, "d", []string{"true"}, 3*time.Second) },
			3 * time.Second, 3*time.Second + cri.ExecTimeoutMargin},
		{"pull, a longer caller deadline", "PullImage img", func() { _, _ = l.Images.PullImage(graceCtx, &runtimeapi.ImageSpec{Image: "img"}, nil, nil) },
			pullDeadline - time.Minute, pullDeadline},
		{"stop", "StopContainer s 30", func() { _ = l.Runtime.StopContainer(t.Context(), "s", 30) },
			30*time.Second + cri.CallTimeout - time.Minute, 30*time.Second + cri.CallTimeout},
		{"stop of the longest grace", "StopContainer s 9000000000", func() { _ = l.Runtime.StopContainer(t.Context(), "s", 9e9) },
			100 * 365 * 24 * time.Hour, 1<<63 - 1},
		{"sandbox stop", "StopPodSandbox sb", func() { _ = l.Runtime.StopPodSandbox(t.Context(), "sb") },
			cri.CallTimeout - time.Minute, cri.CallTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run()
			d, ok := h.deadline(tt.call)
			if !ok {
				t.Fatalf("%s reached the runtime without a deadline (calls seen: %v)", tt.call, h.deadlines)
			}
			if d < tt.min || d > tt.max {
				t.Errorf("%s: deadline %v from its entry, want %v to %v", tt.call, d, tt.min, tt.max)
			}
		})
	}
}

// A pull that never ends is cut off at the pull deadline with an error
// that names it, and gives its slot to the next pull.
func TestLanesPullDeadline(t *testing.T) {
	h := newHanging()
	l := cri.Limit(h, h, cri.Lanes{Changes: 1, Pulls: 1, PullDeadline: 50 * time.Millisecond})
	_, err := l.Images.PullImage(t.Context(), &runtimeapi.ImageSpec{Image: "stuck"}, nil, nil)
	var deadline *cri.PullDeadlineError
	if !errors.As(err, &deadline) || deadline.Image != "stuck" {
		t.Fatalf("a pull that never ends = %v, want a *cri.PullDeadlineError for image stuck", err)
	}
	crifake.WaitFor(t, h.entered, "the first pull")
	close(h.release)
	if _, err := l.Images.PullImage(t.Context(), &runtimeapi.ImageSpec{Image: "next"}, nil, nil); err != nil {
		t.Fatalf("the next pull: %v", err)
	}
}

// Pulls wait for each other in their lane (one at a time when
// serialized), and for nothing else; nothing else waits for them.
func TestLanesPullsSerialized(t *testing.T) {
	h := newHanging()
	l := cri.Limit(h, h, cri.Lanes{Changes: 1, ExecPerPod: 1, ExecPerNode: 1, Pulls: 1, PullDeadline: time.Hour})
	var wg sync.WaitGroup
	for _, img := range []string{"first", "second"} {
		wg.Go(func() { _, _ = l.Images.PullImage(context.Background(), &runtimeapi.ImageSpec{Image: img}, nil, nil) })
	}
	crifake.WaitFor(t, h.entered, "a pull")
	noneEntered(t, h, "a second pull while one runs")
	if err := l.Runtime.RemoveContainer(t.Context(), "c"); err != nil {
		t.Errorf("RemoveContainer while a pull hangs: %v", err)
	}
	if _, _, err := l.Runtime.ExecSync(t.Context(), "c", []string{"true"}, time.Second); err != nil {
		t.Errorf("ExecSync while a pull hangs: %v", err)
	}
	close(h.release)
	wg.Wait()
	crifake.WaitFor(t, h.entered, "the second pull")
}

// Sandbox stops have no limit by default, as the kubelet's: with every
// change slot held, more sandbox stops than the change lane has slots all
// reach the runtime at once. Sized (SandboxStops), the lane holds the
// stops past its size until one ends.
func TestLanesSandboxStops(t *testing.T) {
	for _, tt := range []struct {
		name          string
		sandboxStops  int
		stops, inside int
	}{
		{"no limit by default", 0, 5, 5},
		{"sized", 2, 3, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHanging()
			l := cri.Limit(h, h, cri.Lanes{Changes: 2, SandboxStops: tt.sandboxStops, PullDeadline: time.Hour})
			var wg sync.WaitGroup
			defer wg.Wait()
			released := false
			defer func() {
				if !released {
					close(h.release)
				}
			}()
			for range 2 {
				wg.Go(func() {
					_, _ = l.Runtime.CreateContainer(context.Background(), "sb", &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "hang"}}, nil)
				})
			}
			for range 2 {
				crifake.WaitFor(t, h.entered, "the change lane's calls to reach the runtime")
			}
			for i := range tt.stops {
				wg.Go(func() { _ = l.Runtime.StopPodSandbox(context.Background(), fmt.Sprintf("hang-%d", i)) })
			}
			for range tt.inside {
				crifake.WaitFor(t, h.entered, "a sandbox stop to reach the runtime")
			}
			if tt.inside == tt.stops {
				return
			}
			noneEntered(t, h, "a sandbox stop past the lane's size")
			close(h.release)
			released = true
			for range tt.stops - tt.inside {
				crifake.WaitFor(t, h.entered, "the held sandbox stop once the others ended")
			}
		})
	}
}
