package critest_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/internal/critest"
)

// The kubelet's label keys, as in package cri (cri.PodUIDLabel, ...),
// written out so this smoke test does not depend on cri compiling.
const (
	podUIDLabel        = "io.kubernetes.pod.uid"
	podNameLabel       = "io.kubernetes.pod.name"
	podNamespaceLabel  = "io.kubernetes.pod.namespace"
	containerNameLabel = "io.kubernetes.container.name"
)

// namespaces are the kubelet's for a pod without shareProcessNamespace or
// host namespaces: one network and IPC namespace per pod, one PID namespace
// per container. The kubelet always sets them; nil means Pid: POD (the zero
// NamespaceMode), and then the pause process, not the container's, is PID 1
// and SIGTERM kills a `sleep` that, as PID 1, would ignore it.
var namespaces = &runtimeapi.NamespaceOption{
	Network: runtimeapi.NamespaceMode_POD,
	Pid:     runtimeapi.NamespaceMode_CONTAINER,
	Ipc:     runtimeapi.NamespaceMode_POD,
}

// stopGrace is the StopContainer timeout, in seconds, the grace period a
// container gets between SIGTERM and SIGKILL.
const stopGrace = 3

// TestContainerdSmoke checks, on a real runtime and through CRI only, the
// behaviour the pod workers build on: a sandbox and its containers are
// found by the kubelet's labels; StopContainer gives a container that
// handles SIGTERM the chance to exit by itself (exit code 0) and kills one
// that ignores it when the grace period is over (137); removing the sandbox
// removes its containers.
func TestContainerdSmoke(t *testing.T) {
	critest.Exclusive(t)
	rt, img := critest.Connect(t)
	ctx := t.Context()

	v, err := rt.Version(ctx, "v1")
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	t.Logf("runtime %s %s, CRI %s", v.RuntimeName, v.RuntimeVersion, v.RuntimeApiVersion)
	for _, ref := range []string{critest.BusyboxImage, critest.PauseImage} {
		st, err := img.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: ref}, false)
		if err != nil {
			t.Fatalf("ImageStatus(%s): %v", ref, err)
		}
		if st.GetImage() == nil {
			t.Fatalf("image %s is not on the runtime: tools/containerd-up.sh imports it (are the names in critest and the script in sync?)", ref)
		}
	}

	uid := newUID(t)
	podLabels := map[string]string{
		podUIDLabel:       uid,
		podNameLabel:      "smoke",
		podNamespaceLabel: "podlife-critest",
	}
	logDir := t.TempDir()
	sbConfig := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "smoke", Uid: uid, Namespace: "podlife-critest"},
		Hostname:     "smoke",
		LogDirectory: logDir,
		Labels:       podLabels,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: namespaces},
		},
	}
	podID, err := rt.RunPodSandbox(ctx, sbConfig, "")
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	// Whatever happens below, leave no pod behind (t.Context is already
	// cancelled when cleanups run). containerd answers NotFound to stopping
	// a removed sandbox, so only one still listed is stopped and removed.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		pods, err := rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{Id: podID})
		if err != nil {
			t.Errorf("cleanup: ListPodSandbox: %v", err)
		}
		if len(pods) == 0 {
			return
		}
		if err := rt.StopPodSandbox(ctx, podID); err != nil {
			t.Errorf("cleanup: StopPodSandbox: %v", err)
		}
		if err := rt.RemovePodSandbox(ctx, podID); err != nil {
			t.Errorf("cleanup: RemovePodSandbox: %v", err)
		}
	})

	st, err := rt.PodSandboxStatus(ctx, podID, false)
	if err != nil {
		t.Fatalf("PodSandboxStatus: %v", err)
	}
	if got := st.GetStatus().GetState(); got != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Fatalf("sandbox state after RunPodSandbox = %v, want SANDBOX_READY", got)
	}
	if ip := st.GetStatus().GetNetwork().GetIp(); net.ParseIP(ip) == nil {
		t.Errorf("sandbox IP = %q, want an address from the CNI bridge", ip)
	} else {
		t.Logf("sandbox %.12s, IP %s", podID, ip)
	}

	// Handles TERM: says "ready" once the trap is set (before that, as PID 1
	// it would ignore TERM), and exits 0 on TERM.
	trapper := startContainer(t, rt, podID, sbConfig, "trapper",
		`trap 'echo got TERM; exit 0' TERM; echo ready; sleep 1000 & wait $!; echo no TERM; exit 1`)
	// Ignores TERM: PID 1 without a handler (first sh, then sleep) gets no
	// signal but SIGKILL.
	ignorer := startContainer(t, rt, podID, sbConfig, "ignorer", `echo ready; exec sleep 1000`)
	for _, name := range []string{"trapper", "ignorer"} {
		waitForLog(t, filepath.Join(logDir, name+".log"), "ready")
	}

	// Found by labels, and only by the right ones.
	pods, err := rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{podUIDLabel: uid}})
	if err != nil {
		t.Fatalf("ListPodSandbox: %v", err)
	}
	if len(pods) != 1 || pods[0].Id != podID || pods[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("ListPodSandbox(uid=%s) = %v, want just the ready sandbox %s", uid, pods, podID)
	} else if pods[0].Labels[podNameLabel] != "smoke" || pods[0].Labels[podNamespaceLabel] != "podlife-critest" {
		t.Errorf("sandbox labels = %v, want those of RunPodSandbox %v", pods[0].Labels, podLabels)
	}
	pods, err = rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{podUIDLabel: newUID(t)}})
	if err != nil {
		t.Fatalf("ListPodSandbox: %v", err)
	}
	if len(pods) != 0 {
		t.Errorf("ListPodSandbox(another uid) = %v, want none", pods)
	}
	wantContainers(t, rt, "running, by pod uid",
		&runtimeapi.ContainerFilter{LabelSelector: map[string]string{podUIDLabel: uid}},
		map[string]string{trapper: "trapper", ignorer: "ignorer"})
	wantContainers(t, rt, "by pod uid and container name",
		&runtimeapi.ContainerFilter{LabelSelector: map[string]string{podUIDLabel: uid, containerNameLabel: "ignorer"}},
		map[string]string{ignorer: "ignorer"})
	wantContainers(t, rt, "running, by sandbox",
		&runtimeapi.ContainerFilter{PodSandboxId: podID, State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}},
		map[string]string{trapper: "trapper", ignorer: "ignorer"})

	// Stop both at once: the grace period runs in parallel.
	var wg sync.WaitGroup
	var trapperTook, ignorerTook time.Duration
	var trapperErr, ignorerErr error
	wg.Go(func() { trapperTook, trapperErr = timedStop(ctx, rt, trapper) })
	wg.Go(func() { ignorerTook, ignorerErr = timedStop(ctx, rt, ignorer) })
	wg.Wait()
	t.Logf("StopContainer(timeout=%ds): trapper %v, ignorer %v", stopGrace, trapperTook, ignorerTook)
	if trapperErr != nil || ignorerErr != nil {
		t.Fatalf("StopContainer: trapper: %v; ignorer: %v", trapperErr, ignorerErr)
	}
	// Generous bounds: they tell "exited on TERM" from "waited for the grace
	// period, then killed", nothing finer.
	if trapperTook >= 2500*time.Millisecond {
		t.Errorf("StopContainer(trapper) took %v, want well under the %ds grace period: it exits on TERM", trapperTook, stopGrace)
	}
	if ignorerTook < 2500*time.Millisecond || ignorerTook > 6*time.Second {
		t.Errorf("StopContainer(ignorer) took %v, want about %ds: the grace period, then SIGKILL", ignorerTook, stopGrace)
	}
	wantExited(t, rt, trapper, 0)
	wantExited(t, rt, ignorer, 137) // 128 + SIGKILL
	if log := readFile(t, filepath.Join(logDir, "trapper.log")); !strings.Contains(log, "got TERM") {
		t.Errorf("trapper log has no %q: its trap did not run; log:\n%s", "got TERM", log)
	}
	wantContainers(t, rt, "exited, by sandbox",
		&runtimeapi.ContainerFilter{PodSandboxId: podID, State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_EXITED}},
		map[string]string{trapper: "trapper", ignorer: "ignorer"})

	if err := rt.StopPodSandbox(ctx, podID); err != nil {
		t.Fatalf("StopPodSandbox: %v", err)
	}
	pods, err = rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{podUIDLabel: uid}})
	if err != nil {
		t.Fatalf("ListPodSandbox: %v", err)
	}
	if len(pods) != 1 || pods[0].State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Errorf("ListPodSandbox(uid) after StopPodSandbox = %v, want the sandbox, not ready", pods)
	}
	if err := rt.RemovePodSandbox(ctx, podID); err != nil {
		t.Fatalf("RemovePodSandbox: %v", err)
	}
	pods, err = rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{podUIDLabel: uid}})
	if err != nil {
		t.Fatalf("ListPodSandbox: %v", err)
	}
	if len(pods) != 0 {
		t.Errorf("ListPodSandbox(uid) after RemovePodSandbox = %v, want none", pods)
	}
	wantContainers(t, rt, "after RemovePodSandbox, by pod uid",
		&runtimeapi.ContainerFilter{LabelSelector: map[string]string{podUIDLabel: uid}}, nil)
}

// startContainer creates and starts a busybox container running script with
// sh -c, labelled like the kubelet's, logging to NAME.log in the sandbox's
// log directory.
func startContainer(t *testing.T, rt internalapi.RuntimeService, podID string, sbConfig *runtimeapi.PodSandboxConfig, name, script string) string {
	t.Helper()
	labels := map[string]string{containerNameLabel: name}
	for _, k := range []string{podUIDLabel, podNameLabel, podNamespaceLabel} {
		labels[k] = sbConfig.Labels[k]
	}
	config := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: critest.BusyboxImage},
		Command:  []string{"/bin/sh", "-c", script},
		Labels:   labels,
		LogPath:  name + ".log",
		Linux: &runtimeapi.LinuxContainerConfig{
			SecurityContext: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: namespaces},
		},
	}
	id, err := rt.CreateContainer(t.Context(), podID, config, sbConfig)
	if err != nil {
		t.Fatalf("CreateContainer(%s): %v", name, err)
	}
	if err := rt.StartContainer(t.Context(), id); err != nil {
		t.Fatalf("StartContainer(%s): %v", name, err)
	}
	return id
}

func timedStop(ctx context.Context, rt internalapi.RuntimeService, id string) (time.Duration, error) {
	start := time.Now()
	err := rt.StopContainer(ctx, id, stopGrace)
	return time.Since(start), err
}

// wantContainers checks that ListContainers(filter) returns exactly the
// containers in want (id -> name).
func wantContainers(t *testing.T, rt internalapi.RuntimeService, what string, filter *runtimeapi.ContainerFilter, want map[string]string) {
	t.Helper()
	got, err := rt.ListContainers(t.Context(), filter)
	if err != nil {
		t.Fatalf("ListContainers(%s): %v", what, err)
	}
	gotNames := map[string]string{}
	for _, c := range got {
		gotNames[c.Id] = c.GetMetadata().GetName()
	}
	if !maps.Equal(gotNames, want) {
		t.Errorf("ListContainers(%s) = %v, want %v", what, gotNames, want)
	}
}

func wantExited(t *testing.T, rt internalapi.RuntimeService, id string, code int32) {
	t.Helper()
	resp, err := rt.ContainerStatus(t.Context(), id, false)
	if err != nil {
		t.Fatalf("ContainerStatus: %v", err)
	}
	st := resp.GetStatus()
	name := st.GetMetadata().GetName()
	t.Logf("%s: state %v, exit code %d, reason %q, ran %v", name, st.GetState(), st.GetExitCode(), st.GetReason(),
		time.Duration(st.GetFinishedAt()-st.GetStartedAt()).Round(time.Millisecond))
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED || st.GetExitCode() != code {
		t.Errorf("%s: state %v, exit code %d; want CONTAINER_EXITED, %d", name, st.GetState(), st.GetExitCode(), code)
	}
	if st.GetStartedAt() == 0 || st.GetFinishedAt() < st.GetStartedAt() {
		t.Errorf("%s: started at %d, finished at %d; want both set, in order", name, st.GetStartedAt(), st.GetFinishedAt())
	}
}

// waitForLog waits until the CRI log file at path has a line whose message
// is msg.
func waitForLog(t *testing.T, path, msg string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		for line := range strings.Lines(string(data)) {
			// CRI log format: TIMESTAMP STREAM TAG MESSAGE.
			if f := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 4); len(f) == 4 && f[3] == msg {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %s after 20s; log:\n%s", msg, path, data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// newUID returns a random pod UID in the API server's format.
func newUID(t *testing.T) string {
	t.Helper()
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
