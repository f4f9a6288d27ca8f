package podstatus

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	t0  = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	t1  = metav1.NewTime(t0.Add(time.Minute))
	now = metav1.NewTime(t0.Add(time.Hour))
)

func cond(t v1.PodConditionType, s v1.ConditionStatus, at metav1.Time) v1.PodCondition {
	return v1.PodCondition{Type: t, Status: s, LastTransitionTime: at}
}

func withGen(c v1.PodCondition, g int64) v1.PodCondition { c.ObservedGeneration = g; return c }

func TestMergeStatusPhase(t *testing.T) {
	for _, tc := range []struct {
		name              string
		api, local        v1.PodPhase
		containersStopped bool
		want              v1.PodPhase
		outcome           phaseOutcome
	}{
		{"running is written", v1.PodPending, v1.PodRunning, false, v1.PodRunning, phaseWritten},
		{"terminal held back while containers may run", v1.PodRunning, v1.PodSucceeded, false, v1.PodRunning, phaseHeldBack},
		{"terminal written once containers stopped", v1.PodRunning, v1.PodFailed, true, v1.PodFailed, phaseWritten},
		{"rejected pod: Failed over Pending", v1.PodPending, v1.PodFailed, true, v1.PodFailed, phaseWritten},
		{"API terminal kept over running", v1.PodFailed, v1.PodRunning, false, v1.PodFailed, phaseKeptTerminal},
		{"API terminal kept over another terminal", v1.PodSucceeded, v1.PodFailed, true, v1.PodSucceeded, phaseKeptTerminal},
		{"same terminal phase", v1.PodFailed, v1.PodFailed, true, v1.PodFailed, phaseWritten},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := v1.PodStatus{Phase: tc.api, Reason: "api-reason"}
			local := v1.PodStatus{Phase: tc.local, Reason: "local-reason"}
			got, outcome := mergeStatus(mergeInput{api: api, local: local, containersStopped: tc.containersStopped, now: now})
			if got.Phase != tc.want || outcome != tc.outcome {
				t.Fatalf("phase %q outcome %d, want %q outcome %d", got.Phase, outcome, tc.want, tc.outcome)
			}
			wantReason := "local-reason"
			if tc.outcome != phaseWritten || isTerminal(tc.api) {
				wantReason = "api-reason"
			}
			if got.Reason != wantReason {
				t.Errorf("reason %q, want %q (the reason goes with the phase)", got.Reason, wantReason)
			}
		})
	}
}

func TestMergeStatusConditions(t *testing.T) {
	disruption := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "EvictionByEvictionAPI", LastTransitionTime: t0, ObservedGeneration: 1}
	gate := v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue, LastTransitionTime: t0}
	for _, tc := range []struct {
		name              string
		api, local        v1.PodStatus
		containersStopped bool
		want              []v1.PodCondition
	}{
		{
			name:  "new conditions are written with the generation",
			api:   v1.PodStatus{Phase: v1.PodPending},
			local: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, t1)}},
			want:  []v1.PodCondition{withGen(cond(v1.PodReady, v1.ConditionTrue, t1), 3)},
		},
		{
			name: "an unchanged status keeps the API's transition time",
			api:  v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, t0)}},
			local: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
				cond(v1.PodReady, v1.ConditionTrue, t1), cond(v1.ContainersReady, v1.ConditionTrue, t1)}},
			want: []v1.PodCondition{withGen(cond(v1.PodReady, v1.ConditionTrue, t0), 3), withGen(cond(v1.ContainersReady, v1.ConditionTrue, t1), 3)},
		},
		{
			name:  "a changed status takes the local transition time",
			api:   v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionFalse, t0)}},
			local: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, t1)}},
			want:  []v1.PodCondition{withGen(cond(v1.PodReady, v1.ConditionTrue, t1), 3)},
		},
		{
			name:  "others' conditions are kept in place, as they are",
			api:   v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{gate, cond(v1.PodReady, v1.ConditionFalse, t0), disruption}},
			local: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, t1)}},
			want:  []v1.PodCondition{gate, withGen(cond(v1.PodReady, v1.ConditionTrue, t1), 3), disruption},
		},
		{
			name:  "an owned condition the agent no longer reports is dropped",
			api:   v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReadyToStartContainers, v1.ConditionTrue, t0), cond(v1.PodReady, v1.ConditionTrue, t0)}},
			local: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, t1)}},
			want:  []v1.PodCondition{withGen(cond(v1.PodReady, v1.ConditionTrue, t0), 3)},
		},
		{
			name:  "a local DisruptionTarget waits for the terminal phase",
			api:   v1.PodStatus{Phase: v1.PodRunning},
			local: v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{cond(v1.DisruptionTarget, v1.ConditionTrue, t1)}},
			want:  nil,
		},
		{
			name:              "a local DisruptionTarget is written with the terminal phase",
			api:               v1.PodStatus{Phase: v1.PodRunning},
			local:             v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{cond(v1.DisruptionTarget, v1.ConditionTrue, t1)}},
			containersStopped: true,
			want:              []v1.PodCondition{withGen(cond(v1.DisruptionTarget, v1.ConditionTrue, t1), 3)},
		},
		{
			name:              "a local DisruptionTarget replaces the API's with the terminal phase, same status keeps its time",
			api:               v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{disruption}},
			local:             v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "TerminationByKubelet", LastTransitionTime: t1}}},
			containersStopped: true,
			want:              []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "TerminationByKubelet", LastTransitionTime: t0, ObservedGeneration: 3}},
		},
		{
			name:              "a terminal phase makes the pod not ready",
			api:               v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, t0)}},
			local:             v1.PodStatus{Phase: v1.PodSucceeded, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, t0)}},
			containersStopped: true,
			want:              []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now, ObservedGeneration: 3}},
		},
		{
			name:  "a kept terminal phase keeps the pod not ready, at the API's time",
			api:   v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "PodFailed", LastTransitionTime: t0}}},
			local: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, t1)}},
			want:  []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "PodFailed", LastTransitionTime: t0, ObservedGeneration: 3}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := mergeStatus(mergeInput{api: tc.api, local: tc.local, generation: 3, containersStopped: tc.containersStopped, now: now})
			if !apiequality.Semantic.DeepEqual(got.Conditions, tc.want) {
				t.Fatalf("conditions\n got %+v\nwant %+v", got.Conditions, tc.want)
			}
			if got.ObservedGeneration != 3 {
				t.Errorf("observedGeneration %d, want 3", got.ObservedGeneration)
			}
		})
	}
}

func TestMergeStatusFields(t *testing.T) {
	start := metav1.NewTime(t0.Add(500 * time.Millisecond))
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t1.Add(700 * time.Millisecond))}}
	for _, tc := range []struct {
		name       string
		api, local v1.PodStatus
		check      func(t *testing.T, got v1.PodStatus)
	}{
		{
			name:  "fields the agent does not generate stay",
			api:   v1.PodStatus{Phase: v1.PodPending, QOSClass: v1.PodQOSBestEffort, NominatedNodeName: "n1", HostIP: "10.0.0.1", ObservedGeneration: 1},
			local: v1.PodStatus{Phase: v1.PodRunning},
			check: func(t *testing.T, got v1.PodStatus) {
				if got.QOSClass != v1.PodQOSBestEffort || got.NominatedNodeName != "n1" || got.HostIP != "10.0.0.1" {
					t.Errorf("lost a field the agent does not own: %+v", got)
				}
				if got.ObservedGeneration != 1 {
					t.Errorf("observedGeneration %d without a generation, want the API's 1", got.ObservedGeneration)
				}
			},
		},
		{
			name:  "pod IPs stay once the sandbox is gone, change with a new one",
			api:   v1.PodStatus{PodIP: "10.1.0.5", PodIPs: []v1.PodIP{{IP: "10.1.0.5"}}},
			local: v1.PodStatus{Phase: v1.PodFailed},
			check: func(t *testing.T, got v1.PodStatus) {
				if got.PodIP != "10.1.0.5" {
					t.Errorf("podIP %q, want the API's", got.PodIP)
				}
			},
		},
		{
			name:  "the start time never moves; times are at second precision",
			api:   v1.PodStatus{StartTime: &t0},
			local: v1.PodStatus{StartTime: &t1, ContainerStatuses: []v1.ContainerStatus{{Name: "c", State: running}}},
			check: func(t *testing.T, got v1.PodStatus) {
				if !got.StartTime.Equal(&t0) {
					t.Errorf("startTime %v, want the API's %v", got.StartTime, t0)
				}
				if at := got.ContainerStatuses[0].State.Running.StartedAt; !at.Equal(&t1) {
					t.Errorf("startedAt %v, want it truncated to %v", at, t1)
				}
			},
		},
		{
			name:  "a first start time is the local one, truncated",
			api:   v1.PodStatus{},
			local: v1.PodStatus{StartTime: &start},
			check: func(t *testing.T, got v1.PodStatus) {
				if !got.StartTime.Equal(&t0) {
					t.Errorf("startTime %v, want %v", got.StartTime, t0)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := mergeStatus(mergeInput{api: tc.api, local: tc.local, containersStopped: true, now: now})
			tc.check(t, got)
		})
	}
}

// TestMergeStatusIdempotent: merging a status onto the API status it
// produced changes nothing, so a synced pod is not written again.
func TestMergeStatusIdempotent(t *testing.T) {
	local := v1.PodStatus{
		Phase:      v1.PodRunning,
		StartTime:  &metav1.Time{Time: t0.Add(123 * time.Millisecond)},
		Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, metav1.NewTime(t1.Add(456*time.Millisecond)))},
		ContainerStatuses: []v1.ContainerStatus{{Name: "c", Ready: true,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t1.Add(789 * time.Millisecond))}}}},
	}
	api := v1.PodStatus{Phase: v1.PodPending, QOSClass: v1.PodQOSBestEffort, Conditions: []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue}}}
	first, _ := mergeStatus(mergeInput{api: api, local: local, generation: 2, now: now})
	second, _ := mergeStatus(mergeInput{api: first, local: local, generation: 2, now: now})
	if !apiequality.Semantic.DeepEqual(first, second) {
		t.Fatalf("second merge differs:\n%+v\n%+v", first, second)
	}
}
