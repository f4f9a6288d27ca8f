package worker

import (
	"slices"
	"testing"

	"github.com/podlife/podlife/fsm"
)

func TestLifecycleOfOnePod(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod})
	e.wantState("a", fsm.Running)
	if got := e.syncer.last("a"); got.fn != "SyncPod" || got.updateType != SyncPodCreate {
		t.Fatalf("first call %+v, want SyncPod(create)", got)
	}
	e.advance(e.w.core.resync * 2) // resync
	if n := len(e.syncer.fns("a")); n != 2 {
		t.Fatalf("%d calls after a resync, want 2", n)
	}
	done := make(chan struct{})
	e.update(UpdatePodOptions{UpdateType: SyncPodKill, Pod: pod, KillPodOptions: &KillPodOptions{CompletedCh: done, PodTerminationGracePeriodSecondsOverride: int64p(5)}})
	<-done
	e.wantState("a", fsm.Finished)
	want := []string{"SyncPod", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"}
	if got := e.syncer.fns("a"); !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	if g := e.syncer.started[2].grace; g != 5 {
		t.Errorf("SyncTerminatingPod grace %d, want 5", g)
	}
	if s := e.w.SyncKnownPods(nil); len(s) != 0 {
		t.Fatalf("SyncKnownPods kept %v", s)
	}
	e.wantState("a", fsm.Absent)
}
