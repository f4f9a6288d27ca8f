package kuberuntime

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/cri/mount"
	"github.com/podlife/podlife/internal/crifake"
)

// A pod whose sandbox never came up leaves nothing in the runtime, but its
// directory with its volumes (a memory emptyDir's tmpfs) and its log
// directory: once it is gone they are found on disk and removed, the tmpfs
// unmounted, as for any other pod; a pod still known keeps its own.
func TestPodWithoutSandboxRemoved(t *testing.T) {
	crifake.NeedRoot(t)
	root := crifake.MountRoot(t)
	h := newHarness(t, Options{PodsRoot: root, LogRoot: root}, "img")
	pod := crifake.VolumePod([]v1.Volume{
		crifake.EmptyDir("disk"),
		{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
	}, v1.VolumeMount{Name: "disk", MountPath: "/disk"}, v1.VolumeMount{Name: "mem", MountPath: "/mem"})
	other := crifake.MakePod("other", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	h.mustSync(other)

	h.fake.InjectError("RunPodSandbox", errors.New("injected: no sandbox"))
	if _, err := h.syncPod(pod); err == nil || !strings.Contains(err.Error(), "no sandbox") {
		t.Fatalf("SyncPod = %v; want the sandbox's failure", err)
	}
	if n := mountsUnder(t, root); n == 0 {
		t.Fatal("the memory emptyDir is not mounted: the test proves nothing")
	}
	for _, dir := range []string{"uid-web", "ns_web_uid-web"} {
		if _, err := os.Stat(filepath.Join(root, dir)); err != nil {
			t.Fatalf("before the deletion: %v", err)
		}
	}
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.s.SyncTerminatedPod(context.Background(), pod, nil); err != nil {
		t.Fatal(err)
	}
	if sbs, cs := h.podObjects(pod.UID); len(sbs)+len(cs) > 0 {
		t.Fatalf("the runtime holds %v %v of a pod whose sandbox never came up", sbs, cs)
	}

	// The agent hands over what is on disk of pods it no longer knows.
	uids, err := h.s.PodsOnDisk()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, uid := range uids {
		if uid == other.UID {
			continue // still known
		}
		found = found || uid == pod.UID
		h.s.RemoveDeadPod(uid)
	}
	h.s.Close()
	if !found {
		t.Fatalf("PodsOnDisk = %v; want %s among them", uids, pod.UID)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), string(pod.UID)) {
			t.Errorf("%s of the gone pod is still there", e.Name())
		}
	}
	if n := mountsUnder(t, filepath.Join(root, string(pod.UID))); n != 0 {
		t.Errorf("%d mounts left under the gone pod's directory", n)
	}
	if _, err := os.Stat(filepath.Join(root, string(other.UID))); err != nil {
		t.Errorf("the known pod's directory: %v", err)
	}
}

// mountsUnder counts the mount points under dir.
func mountsUnder(t *testing.T, dir string) int {
	t.Helper()
	points, err := mount.Points()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range points {
		if strings.HasPrefix(p, filepath.Clean(dir)+string(filepath.Separator)) {
			n++
		}
	}
	return n
}

// A pod directory that cannot be removed is retried by every housekeeping
// but said once: the node e2e run logged one line per such pod every 2 s
// for an hour.
func TestPodDirFailureSaidOnce(t *testing.T) {
	var logs bytes.Buffer
	h := newHarness(t, Options{PodsRoot: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}, "img")
	uid := types.UID("not/a-uid") // no directory of PodsRoot: its removal fails
	for range 3 {
		h.s.RemoveDeadPod(uid)
		h.s.Close()
	}
	if n := strings.Count(logs.String(), "removing the pod directory failed"); n != 1 {
		t.Errorf("%d warnings about the pod directory after three removals, want 1:\n%s", n, logs.String())
	}
}
