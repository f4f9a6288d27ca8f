package shutdown

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	t0      = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	earlier = metav1.NewTime(t0.Add(-time.Hour))
	nowT    = metav1.NewTime(t0)
)

func disruption(status v1.ConditionStatus, reason, msg string, at metav1.Time) v1.PodCondition {
	return v1.PodCondition{Type: v1.DisruptionTarget, Status: status, Reason: reason, Message: msg, LastTransitionTime: at}
}

func TestPodStatusFunc(t *testing.T) {
	ready := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: earlier}
	shutdownCond := disruption(v1.ConditionTrue, "TerminationByKubelet", "Pod was terminated in response to imminent node shutdown.", nowT)
	tests := []struct {
		name string
		in   v1.PodStatus
		want v1.PodStatus
	}{
		{
			name: "running pod fails",
			in:   v1.PodStatus{Phase: v1.PodRunning},
			want: v1.PodStatus{Phase: v1.PodFailed, Reason: "Terminated",
				Message:    "Pod was terminated in response to imminent node shutdown.",
				Conditions: []v1.PodCondition{shutdownCond}},
		},
		{
			name: "pending pod fails",
			in:   v1.PodStatus{Phase: v1.PodPending},
			want: v1.PodStatus{Phase: v1.PodFailed, Reason: "Terminated",
				Message:    "Pod was terminated in response to imminent node shutdown.",
				Conditions: []v1.PodCondition{shutdownCond}},
		},
		{
			name: "succeeded pod stays succeeded",
			in:   v1.PodStatus{Phase: v1.PodSucceeded, Reason: "Done"},
			want: v1.PodStatus{Phase: v1.PodSucceeded, Reason: "Terminated",
				Message:    "Pod was terminated in response to imminent node shutdown.",
				Conditions: []v1.PodCondition{shutdownCond}},
		},
		{
			name: "failed pod gets the shutdown reason",
			in:   v1.PodStatus{Phase: v1.PodFailed, Reason: "Error", Message: "exit 1"},
			want: v1.PodStatus{Phase: v1.PodFailed, Reason: "Terminated",
				Message:    "Pod was terminated in response to imminent node shutdown.",
				Conditions: []v1.PodCondition{shutdownCond}},
		},
		{
			name: "other conditions kept",
			in:   v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{ready}},
			want: v1.PodStatus{Phase: v1.PodFailed, Reason: "Terminated",
				Message:    "Pod was terminated in response to imminent node shutdown.",
				Conditions: []v1.PodCondition{ready, shutdownCond}},
		},
		{
			name: "a true disruption condition keeps its transition time",
			in: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
				disruption(v1.ConditionTrue, "PreemptionByScheduler", "x", earlier), ready}},
			want: v1.PodStatus{Phase: v1.PodFailed, Reason: "Terminated",
				Message: "Pod was terminated in response to imminent node shutdown.",
				Conditions: []v1.PodCondition{
					disruption(v1.ConditionTrue, "TerminationByKubelet", "Pod was terminated in response to imminent node shutdown.", earlier), ready}},
		},
		{
			name: "a false disruption condition turns true now",
			in: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
				disruption(v1.ConditionFalse, "", "", earlier)}},
			want: v1.PodStatus{Phase: v1.PodFailed, Reason: "Terminated",
				Message:    "Pod was terminated in response to imminent node shutdown.",
				Conditions: []v1.PodCondition{shutdownCond}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := *tt.in.DeepCopy()
			podStatusFunc(clocktesting.NewFakeClock(t0))(&got)
			if !equality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("status =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}
