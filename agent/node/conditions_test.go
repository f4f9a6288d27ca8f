package node

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var fullCapacity = v1.ResourceList{
	v1.ResourceCPU:    resource.MustParse("2"),
	v1.ResourceMemory: resource.MustParse("4Gi"),
	v1.ResourcePods:   resource.MustParse("110"),
}

func TestReadyCondition(t *testing.T) {
	for _, tc := range []struct {
		name            string
		r               readiness
		capacity        v1.ResourceList
		status          v1.ConditionStatus
		reason, message string
	}{
		{"ready", readiness{ok: true}, fullCapacity, v1.ConditionTrue, ReasonReady, MessageReady},
		{"runtime down", readiness{ok: false, reason: "RuntimeDown", message: "container runtime is down"}, fullCapacity,
			v1.ConditionFalse, "RuntimeDown", "container runtime is down"},
		{"not ready without reason", readiness{ok: false}, fullCapacity, v1.ConditionFalse, ReasonNotReady, "the agent is not ready"},
		{"shutting down", readiness{ok: true, shuttingDown: true}, fullCapacity, v1.ConditionFalse, ReasonNotReady, MessageShuttingDown},
		{"shutting down and runtime down", readiness{ok: false, reason: "RuntimeDown", message: "runtime down", shuttingDown: true}, fullCapacity,
			v1.ConditionFalse, ReasonNotReady, "[runtime down, node is shutting down]"},
		{"missing capacity", readiness{ok: true}, v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")},
			v1.ConditionFalse, ReasonNotReady, "missing node capacity for resources: memory, pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := readyCondition(tc.r, tc.capacity)
			if c.Type != v1.NodeReady || c.Status != tc.status || c.Reason != tc.reason || c.Message != tc.message {
				t.Errorf("got %s=%s %q %q, want Ready=%s %q %q", c.Type, c.Status, c.Reason, c.Message, tc.status, tc.reason, tc.message)
			}
		})
	}
}

func TestSetConditions(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0.Add(time.Minute)
	ready := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: ReasonReady, Message: MessageReady}
	notReady := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionFalse, Reason: ReasonNotReady, Message: MessageShuttingDown}
	at := func(c v1.NodeCondition, transition, heartbeat time.Time) v1.NodeCondition {
		c.LastTransitionTime, c.LastHeartbeatTime = metav1.NewTime(transition), metav1.NewTime(heartbeat)
		return c
	}
	other := v1.NodeCondition{Type: "NetworkUnavailable", Status: v1.ConditionFalse, Reason: "RouteCreated"}
	for _, tc := range []struct {
		name string
		have []v1.NodeCondition
		want v1.NodeCondition
		got  []v1.NodeCondition
	}{
		{"new condition: transition now", nil, ready, []v1.NodeCondition{at(ready, now, now)}},
		{"same status: transition kept", []v1.NodeCondition{at(ready, t0, t0)}, ready, []v1.NodeCondition{at(ready, t0, now)}},
		{"status changed: transition now", []v1.NodeCondition{at(ready, t0, t0)}, notReady, []v1.NodeCondition{at(notReady, now, now)}},
		{"message changed, status not: transition kept",
			[]v1.NodeCondition{at(notReady, t0, t0)}, func() v1.NodeCondition { c := notReady; c.Message = "other"; return c }(),
			[]v1.NodeCondition{func() v1.NodeCondition { c := at(notReady, t0, now); c.Message = "other"; return c }()}},
		{"others kept, in place", []v1.NodeCondition{other, at(ready, t0, t0)}, ready, []v1.NodeCondition{other, at(ready, t0, now)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := setConditions(append([]v1.NodeCondition(nil), tc.have...), []v1.NodeCondition{tc.want}, now)
			if len(got) != len(tc.got) {
				t.Fatalf("got %d conditions, want %d: %+v", len(got), len(tc.got), got)
			}
			for i := range got {
				if conditionsChanged(got[i:i+1], tc.got[i:i+1]) || !got[i].LastHeartbeatTime.Equal(&tc.got[i].LastHeartbeatTime) {
					t.Errorf("condition %d: got %+v, want %+v", i, got[i], tc.got[i])
				}
			}
		})
	}
}

func TestConditionsChanged(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	base := []v1.NodeCondition{
		{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, LastTransitionTime: t0, LastHeartbeatTime: t0},
		{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: ReasonReady, LastTransitionTime: t0, LastHeartbeatTime: t0},
	}
	edit := func(f func(c []v1.NodeCondition) []v1.NodeCondition) []v1.NodeCondition {
		return f(append([]v1.NodeCondition(nil), base...))
	}
	for _, tc := range []struct {
		name    string
		other   []v1.NodeCondition
		changed bool
	}{
		{"same", edit(func(c []v1.NodeCondition) []v1.NodeCondition { return c }), false},
		{"heartbeat only", edit(func(c []v1.NodeCondition) []v1.NodeCondition { c[1].LastHeartbeatTime = t1; return c }), false},
		{"other order", edit(func(c []v1.NodeCondition) []v1.NodeCondition { return []v1.NodeCondition{c[1], c[0]} }), false},
		{"status", edit(func(c []v1.NodeCondition) []v1.NodeCondition { c[1].Status = v1.ConditionFalse; return c }), true},
		{"message", edit(func(c []v1.NodeCondition) []v1.NodeCondition { c[1].Message = "x"; return c }), true},
		{"transition", edit(func(c []v1.NodeCondition) []v1.NodeCondition { c[0].LastTransitionTime = t1; return c }), true},
		{"one fewer", edit(func(c []v1.NodeCondition) []v1.NodeCondition { return c[1:] }), true},
		{"other type", edit(func(c []v1.NodeCondition) []v1.NodeCondition { c[0].Type = v1.NodeDiskPressure; return c }), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := conditionsChanged(base, tc.other); got != tc.changed {
				t.Errorf("changed %v, want %v", got, tc.changed)
			}
		})
	}
}
