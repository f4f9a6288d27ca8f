package kuberuntime

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/internal/crifake"
)

// A pod past its active deadline is ended: SyncPod reports it terminal
// with the kubelet's event and a Failed status, reason DeadlineExceeded,
// and the terminating sync keeps that reason whatever the kill's exit
// codes; a pod that completed by itself keeps its phase.
func TestActiveDeadline(t *testing.T) {
	for _, tc := range []struct {
		name      string
		completed bool
		wantPhase v1.PodPhase
	}{
		{name: "running", wantPhase: v1.PodFailed},
		{name: "completed by itself", completed: true, wantPhase: v1.PodSucceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			// The fake runtime stamps its objects with the real clock.
			h.clock.SetTime(time.Now())
			pod := crifake.MakePod("web", v1.RestartPolicyNever, crifake.Ctr{Name: "app"})
			h.mustSync(pod)
			pod.Spec.ActiveDeadlineSeconds = new(int64(5)) // an update of the running pod
			h.clock.Step(4 * time.Second)
			h.mustSync(pod)
			if tc.completed {
				h.exit(crifake.ContainerID(pod, 0, "app", 0), 0)
			}
			h.clock.Step(2 * time.Second)
			terminal, err := h.syncPod(pod)
			if err != nil || !terminal {
				t.Fatalf("SyncPod past the deadline = %v, %v; want terminal", terminal, err)
			}
			wantReason := ""
			if !tc.completed {
				wantReason = DeadlineExceededReason
				st := h.statuses.last(t, pod.UID)
				if st.Phase != v1.PodFailed || st.Reason != wantReason || st.Message != DeadlineExceededMessage {
					t.Errorf("status past the deadline: %s %q %q", st.Phase, st.Reason, st.Message)
				}
				if got := h.events.Messages(pod.UID, DeadlineExceededReason); !slices.Equal(got, []string{DeadlineExceededMessage}) {
					t.Errorf("DeadlineExceeded events %q", got)
				}
			}
			if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
				t.Fatal(err)
			}
			st := h.statuses.last(t, pod.UID)
			if st.Phase != tc.wantPhase || st.Reason != wantReason {
				t.Errorf("final status %s %q, want %s %q", st.Phase, st.Reason, tc.wantPhase, wantReason)
			}
		})
	}
}

func TestPastActiveDeadline(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		deadline *int64
		start    time.Time
		now      time.Time
		want     bool
	}{
		{"no deadline", nil, start, start.Add(time.Hour), false},
		{"not started", new(int64(5)), time.Time{}, start, false},
		{"before", new(int64(5)), start, start.Add(4999 * time.Millisecond), false},
		{"at", new(int64(5)), start, start.Add(5 * time.Second), true},
		{"after", new(int64(5)), start, start.Add(time.Minute), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{ActiveDeadlineSeconds: tc.deadline}}
			if got := PastActiveDeadline(pod, tc.start, tc.now); got != tc.want {
				t.Errorf("PastActiveDeadline = %v, want %v", got, tc.want)
			}
		})
	}
}

// The pod's start is the earliest of its status's start time and its
// sandboxes' creation.
func TestActiveSince(t *testing.T) {
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	rt := crifake.RuntimePod(nil)
	if got := activeSince(pod, rt); !got.IsZero() {
		t.Errorf("activeSince of a pod never run = %v", got)
	}
	early := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	pod.Status.StartTime = &early
	if got := activeSince(pod, rt); !got.Equal(early.Time) {
		t.Errorf("activeSince = %v, want the status's %v", got, early)
	}
}
