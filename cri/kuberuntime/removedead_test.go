package kuberuntime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/podlife/podlife/cri/logs"
	"github.com/podlife/podlife/internal/crifake"
)

// RemoveDeadPod removes a pod in which nothing runs, once even when asked
// twice while its removal is in flight, and leaves alone a pod that runs.
func TestRemoveDeadPod(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	dead := completedPod(h, "dead")
	h.killSandbox(crifake.SandboxID(dead, 0))
	alive := runningPod(h, "alive")

	removing, release := h.blockRemovals()
	h.s.RemoveDeadPod(dead.UID)
	crifake.WaitFor(t, removing, "RemoveContainer")
	// A second request while the first is in flight starts nothing.
	h.s.RemoveDeadPod(dead.UID)
	h.s.RemoveDeadPod(alive.UID)
	close(release)
	h.s.Close()
	if sbs, cs := h.podObjects(dead.UID); len(sbs)+len(cs) > 0 {
		t.Errorf("dead pod left behind: %v %v", sbs, cs)
	}
	if sbs, cs := h.podObjects(alive.UID); len(sbs) != 1 || len(cs) != 3 {
		t.Errorf("running pod touched: %v %v", sbs, cs)
	}
	// Two containers and one sandbox of the dead pod: each removed once.
	if n := h.calls("RemoveContainer"); n != 2 {
		t.Errorf("RemoveContainer called %d times, want 2", n)
	}
	if n := h.calls("RemovePodSandbox"); n != 1 {
		t.Errorf("RemovePodSandbox called %d times, want 1", n)
	}
}

// A failed read leaves the pod for the next request.
func TestRemoveDeadPodReadFails(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := terminatedPod(h, "p")
	h.fake.InjectError("ListContainers", errors.New("injected"))
	h.s.RemoveDeadPod(pod.UID)
	h.s.Close()
	if sbs, cs := h.podObjects(pod.UID); len(sbs) != 1 || len(cs) != 2 {
		t.Fatalf("removed after a failed read: %v %v", sbs, cs)
	}
	h.s.RemoveDeadPod(pod.UID)
	h.s.Close()
	if sbs, cs := h.podObjects(pod.UID); len(sbs)+len(cs) > 0 {
		t.Errorf("left behind by the second request: %v %v", sbs, cs)
	}
}

// Removal of a deleted pod never blocks its caller; Close waits for it.
func TestRemoveDeadPodRemovalBlocks(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := terminatedPod(h, "p")
	removing, release := h.blockRemovals()

	h.s.RemoveDeadPod(pod.UID)
	crifake.WaitFor(t, removing, "RemoveContainer")
	closed := make(chan struct{})
	go func() { h.s.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a removal is blocked")
	default:
	}

	close(release)
	crifake.WaitFor(t, closed, "Close")
	if sbs, cs := h.podObjects(pod.UID); len(sbs)+len(cs) > 0 {
		t.Errorf("left behind: %v %v", sbs, cs)
	}
}

// RemovalTimeout bounds a removal that hangs.
func TestRemoveDeadPodRemovalTimeout(t *testing.T) {
	h := newHarness(t, Options{RemovalTimeout: 20 * time.Millisecond}, "img")
	pod := terminatedPod(h, "p")
	h.rt.OnRemove = func(ctx context.Context, _ string, _ func() error) error {
		<-ctx.Done()
		return ctx.Err()
	}
	h.s.RemoveDeadPod(pod.UID)
	closed := make(chan struct{})
	go func() { h.s.Close(); close(closed) }()
	crifake.WaitFor(t, closed, "Close")
	if _, cs := h.podObjects(pod.UID); len(cs) != 2 {
		t.Errorf("containers %v", cs)
	}
}

// The log directory of a deleted pod goes with its containers, and stays
// while any of them could not be removed.
func TestRemoveDeadPodLogDirectory(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inject string // a removal that fails
		// reAdded: the UID's manifest comes back during the removal, and
		// its new incarnation runs a sandbox.
		reAdded bool
		gone    bool
	}{
		{name: "removed", gone: true},
		{name: "kept while a container stays", inject: "RemoveContainer"},
		{name: "kept while the sandbox stays", inject: "RemovePodSandbox"},
		{name: "kept for a new incarnation", reAdded: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			h := newHarness(t, Options{LogRoot: root}, "img")
			pod := terminatedPod(h, "p")
			dir, err := logs.PodDir(root, pod)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("the pod's log directory was not created: %v", err)
			}
			other := filepath.Join(root, "ns_other_uid-other")
			if err := os.Mkdir(other, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.inject != "" {
				h.fake.InjectError(tc.inject, errors.New("injected"))
			}
			if tc.reAdded {
				cfg, err := sandboxConfig(pod, 1, root)
				if err != nil {
					t.Fatal(err)
				}
				var once sync.Once
				h.rt.OnRemove = func(ctx context.Context, _ string, next func() error) error {
					once.Do(func() {
						if _, err := h.fake.RunPodSandbox(ctx, cfg, ""); err != nil {
							t.Error(err)
						}
					})
					return next()
				}
			}
			h.s.RemoveDeadPod(pod.UID)
			h.s.Close()
			if _, err := os.Stat(dir); os.IsNotExist(err) != tc.gone {
				t.Errorf("log directory %s: stat error %v, want gone=%v", dir, err, tc.gone)
			}
			if _, err := os.Stat(other); err != nil {
				t.Errorf("another pod's log directory: %v", err)
			}
		})
	}
}
