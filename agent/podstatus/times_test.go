package podstatus

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStampTimes(t *testing.T) {
	for _, tc := range []struct {
		name          string
		prev, st      v1.PodStatus
		wantCondition metav1.Time
		wantStart     metav1.Time
	}{
		{
			name:          "first status: now",
			st:            v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}},
			wantCondition: now, wantStart: now,
		},
		{
			name:          "unchanged condition keeps its time; the start time stays",
			prev:          v1.PodStatus{StartTime: &t0, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, t0)}},
			st:            v1.PodStatus{StartTime: &t1, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}},
			wantCondition: t0, wantStart: t0,
		},
		{
			name:          "changed condition: now; the sandbox's start time when none before",
			prev:          v1.PodStatus{Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionFalse, t0)}},
			st:            v1.PodStatus{StartTime: &t1, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}},
			wantCondition: now, wantStart: t1,
		},
		{
			name:          "changed condition carrying its own time keeps it",
			prev:          v1.PodStatus{Conditions: []v1.PodCondition{cond(v1.DisruptionTarget, v1.ConditionFalse, t0)}},
			st:            v1.PodStatus{Conditions: []v1.PodCondition{cond(v1.DisruptionTarget, v1.ConditionTrue, t1)}},
			wantCondition: t1, wantStart: now,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stampTimes(&tc.prev, &tc.st, now)
			if got := tc.st.Conditions[0].LastTransitionTime; !got.Equal(&tc.wantCondition) {
				t.Errorf("lastTransitionTime %v, want %v", got, tc.wantCondition)
			}
			if !tc.st.StartTime.Equal(&tc.wantStart) {
				t.Errorf("startTime %v, want %v", tc.st.StartTime, tc.wantStart)
			}
		})
	}
}
