package embedded

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestLifecycle(t *testing.T) {
	c := start(t)
	ctx := t.Context()
	image := &runtimeapi.ImageSpec{Image: "busybox:1.36"}
	if resp, err := c.images.ImageStatus(ctx, image, false); err != nil || resp.Image != nil {
		t.Fatalf("image before pull: %v, %v; want absent", resp, err)
	}
	if ref, err := c.images.PullImage(ctx, image, nil, nil); err != nil || ref != image.Image {
		t.Fatalf("pull: %q, %v", ref, err)
	}
	if resp, err := c.images.ImageStatus(ctx, image, false); err != nil || resp.Image.GetId() != image.Image {
		t.Fatalf("image after pull: %v, %v", resp, err)
	}

	sb := sandboxConfig("web", "u1")
	sandboxID, err := c.rs.RunPodSandbox(ctx, sb, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.sandboxState(t, sandboxID); got != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Fatalf("sandbox %v, want ready", got)
	}
	id, err := c.rs.CreateContainer(ctx, sandboxID, containerConfig("app", "u1", 0), sb)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.containerStatus(t, id).State; got != runtimeapi.ContainerState_CONTAINER_CREATED {
		t.Fatalf("after create %v", got)
	}
	if err := c.rs.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if st := c.containerStatus(t, id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING || st.StartedAt == 0 {
		t.Fatalf("after start %v, startedAt %d", st.State, st.StartedAt)
	}

	began := time.Now()
	if err := c.rs.StopContainer(ctx, id, 30); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("stop took %v; stops are instant", d)
	}
	st := c.containerStatus(t, id)
	if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 0 || st.Reason != "Completed" || st.FinishedAt == 0 {
		t.Fatalf("after stop %v code %d reason %q finishedAt %d", st.State, st.ExitCode, st.Reason, st.FinishedAt)
	}
	if err := c.rs.RemoveContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if list, err := c.rs.ListContainers(ctx, nil); err != nil || len(list) != 0 {
		t.Fatalf("containers after remove: %v, %v", list, err)
	}
	if err := c.rs.StopPodSandbox(ctx, sandboxID); err != nil {
		t.Fatal(err)
	}
	if got := c.sandboxState(t, sandboxID); got != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Fatalf("sandbox after stop %v", got)
	}
	if err := c.rs.RemovePodSandbox(ctx, sandboxID); err != nil {
		t.Fatal(err)
	}
	if list, err := c.rs.ListPodSandbox(ctx, nil); err != nil || len(list) != 0 {
		t.Fatalf("sandboxes after remove: %v, %v", list, err)
	}
}

func TestFilters(t *testing.T) {
	c := start(t)
	sb1, c1 := c.runPod(t, "a", "u1")
	sb2, c2 := c.runPod(t, "b", "u2")
	if err := c.rs.StopContainer(t.Context(), c2, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.rs.StopPodSandbox(t.Context(), sb2); err != nil {
		t.Fatal(err)
	}
	for _, streaming := range []bool{false, true} {
		rs := dial(t, c.rt.Endpoint(), streaming)
		sandboxes := func(f *runtimeapi.PodSandboxFilter) []string {
			list, err := rs.ListPodSandbox(t.Context(), f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range list {
				ids = append(ids, s.Id)
			}
			slices.Sort(ids)
			return ids
		}
		containers := func(f *runtimeapi.ContainerFilter) []string {
			list, err := rs.ListContainers(t.Context(), f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range list {
				ids = append(ids, s.Id)
			}
			slices.Sort(ids)
			return ids
		}
		for _, tc := range []struct {
			name      string
			got, want []string
		}{
			{"all sandboxes", sandboxes(nil), []string{sb1, sb2}},
			{"sandbox by label", sandboxes(&runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"io.kubernetes.pod.uid": "u2"}}), []string{sb2}},
			{"sandbox by absent label", sandboxes(&runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"io.kubernetes.pod.uid": "u3"}}), nil},
			{"ready sandboxes", sandboxes(&runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}), []string{sb1}},
			{"sandbox by id", sandboxes(&runtimeapi.PodSandboxFilter{Id: sb2}), []string{sb2}},
			{"all containers", containers(nil), []string{c1, c2}},
			{"container by label", containers(&runtimeapi.ContainerFilter{LabelSelector: map[string]string{"io.kubernetes.pod.uid": "u1"}}), []string{c1}},
			{"container by sandbox", containers(&runtimeapi.ContainerFilter{PodSandboxId: sb2}), []string{c2}},
			{"running containers", containers(&runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}), []string{c1}},
		} {
			if !slices.Equal(tc.got, tc.want) {
				t.Errorf("streaming %v, %s: got %v, want %v", streaming, tc.name, tc.got, tc.want)
			}
		}
	}
}

func TestInjectErrorFailsOnce(t *testing.T) {
	c := start(t)
	_, id := c.runPod(t, "a", "u1")
	if err := c.rt.InjectError("StopContainer", status.Error(codes.Unavailable, "scripted")); err != nil {
		t.Fatal(err)
	}
	err := c.rs.StopContainer(t.Context(), id, 10)
	wantCode(t, "first stop", err, codes.Unavailable)
	if err == nil || !strings.Contains(err.Error(), "scripted") {
		t.Errorf("first stop: %v, want the scripted error", err)
	}
	if st := c.containerStatus(t, id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("a failed stop stopped the container: %v", st.State)
	}
	if err := c.rs.StopContainer(t.Context(), id, 10); err != nil {
		t.Fatalf("second stop: %v", err)
	}

	// Image methods too; a plain error arrives as Unknown.
	if err := c.rt.InjectError("PullImage", errors.New("no registry")); err != nil {
		t.Fatal(err)
	}
	image := &runtimeapi.ImageSpec{Image: "x"}
	_, err = c.images.PullImage(t.Context(), image, nil, nil)
	wantCode(t, "first pull", err, codes.Unknown)
	if _, err := c.images.PullImage(t.Context(), image, nil, nil); err != nil {
		t.Errorf("second pull: %v", err)
	}

	if err := c.rt.InjectError("StopContainers", errors.New("typo")); err == nil {
		t.Error("an unknown method was accepted")
	}
	if err := c.rt.InjectError("StopContainer", nil); err == nil {
		t.Error("a nil error was accepted")
	}
}

func TestExitContainer(t *testing.T) {
	c := start(t)
	_, id := c.runPod(t, "a", "u1")
	before := time.Now().UnixNano()
	if err := c.rt.ExitContainer(id, 3); err != nil {
		t.Fatal(err)
	}
	st := c.containerStatus(t, id)
	if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 3 || st.Reason != "Error" || st.FinishedAt < before {
		t.Fatalf("got %v code %d reason %q finishedAt %d", st.State, st.ExitCode, st.Reason, st.FinishedAt)
	}
	wantCode(t, "exit twice", c.rt.ExitContainer(id, 0), codes.FailedPrecondition)
	wantCode(t, "exit unknown", c.rt.ExitContainer("nope", 0), codes.NotFound)
	// Stopping an exited container keeps how it ended.
	if err := c.rs.StopContainer(t.Context(), id, 0); err != nil {
		t.Fatal(err)
	}
	if again := c.containerStatus(t, id); again.ExitCode != 3 || again.FinishedAt != st.FinishedAt || again.Reason != "Error" {
		t.Errorf("stop changed an exited container: code %d reason %q finishedAt %d", again.ExitCode, again.Reason, again.FinishedAt)
	}

	_, id2 := c.runPod(t, "b", "u2")
	if err := c.rt.ExitContainer(id2, 0); err != nil {
		t.Fatal(err)
	}
	if st := c.containerStatus(t, id2); st.ExitCode != 0 || st.Reason != "Completed" {
		t.Errorf("exit 0: code %d reason %q", st.ExitCode, st.Reason)
	}
}

func TestStopReleasesSocket(t *testing.T) {
	dir := t.TempDir()
	rt, err := Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Start(dir); err == nil {
		t.Fatal("a second runtime took a socket in use")
	}
	rs := dial(t, rt.Endpoint(), false)
	if err := rt.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := rt.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, SocketName)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("socket after Stop: %v", err)
	}
	if _, err := rs.ListPodSandbox(t.Context(), nil); err == nil {
		t.Fatal("a call succeeded after Stop")
	}
	rt2, err := Start(dir)
	if err != nil {
		t.Fatalf("restart in the same directory: %v", err)
	}
	if err := rt2.Stop(); err != nil {
		t.Fatal(err)
	}
}

func TestStartReplacesStaleSocket(t *testing.T) {
	dir := t.TempDir()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, SocketName), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false) // as a process that died leaves it
	l.Close()
	rt, err := Start(dir)
	if err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	if err := rt.Stop(); err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(filepath.Join(dir, SocketName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if rt, err := Start(dir); err == nil {
		rt.Stop()
		t.Fatal("Start replaced a regular file")
	}
}

func TestStartRejectsLongPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", maxSocketPath))
	if rt, err := Start(dir); err == nil {
		rt.Stop()
		t.Fatal("socket path beyond the unix limit accepted")
	}
}

// Calls leave no record: what the runtime holds does not grow with them.
func TestCallsNotRecorded(t *testing.T) {
	c := start(t)
	for range 50 {
		if _, err := c.rs.ListPodSandbox(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.images.PullImage(t.Context(), &runtimeapi.ImageSpec{Image: "x"}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	streaming := dial(t, c.rt.Endpoint(), true)
	if _, err := streaming.ListContainers(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	s := c.rt.svc
	s.mu.Lock()
	held := len(s.sandboxes) + len(s.containers) + len(s.injected)
	images := len(s.images)
	s.mu.Unlock()
	if held != 0 {
		t.Errorf("runtime service kept %d entries", held)
	}
	if images != 1 {
		t.Errorf("image service kept %d images, want the one pulled", images)
	}
}

// Hooks and calls from many goroutines at once; the race detector judges.
func TestConcurrentUse(t *testing.T) {
	c := start(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				if _, err := c.rs.ListContainers(t.Context(), nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := range 10 {
		_, id := c.runPod(t, fmt.Sprint("p", i), fmt.Sprint("u", i))
		if err := c.rt.ExitContainer(id, int32(i)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	list, err := c.rs.ListContainers(t.Context(), &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_EXITED}})
	if err != nil || len(list) != 10 {
		t.Errorf("exited containers: %d, %v; want 10", len(list), err)
	}
}
