package cri

import (
	"context"
	"testing"
)

// RemoveDeadPod removes a pod in which nothing runs, once even when asked
// twice while its removal is in flight, and refuses a pod that runs.
func TestRemoveDeadPod(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	dead := completedPod(h, "dead")
	h.killSandbox(sandboxID(dead, 0))
	alive := runningPod(h, "alive")

	removing, release := h.blockRemovals()
	if err := h.s.RemoveDeadPod(context.Background(), dead.UID); err != nil {
		t.Fatalf("RemoveDeadPod(dead): %v", err)
	}
	waitFor(t, removing, "RemoveContainer")
	// A second request while the first is in flight starts nothing.
	if err := h.s.RemoveDeadPod(context.Background(), dead.UID); err != nil {
		t.Fatalf("second RemoveDeadPod(dead): %v", err)
	}
	if err := h.s.RemoveDeadPod(context.Background(), alive.UID); err == nil {
		t.Error("RemoveDeadPod removed a pod whose containers run")
	}
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
