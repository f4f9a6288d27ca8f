package podstatus

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestGateReady(t *testing.T) {
	g1, g2 := v1.PodConditionType("example.com/one"), v1.PodConditionType("example.com/two")
	gates := []v1.PodReadinessGate{{ConditionType: g1}, {ConditionType: g2}}
	tru, fals := v1.ConditionTrue, v1.ConditionFalse
	gate := func(t v1.PodConditionType, s v1.ConditionStatus) v1.PodCondition {
		return v1.PodCondition{Type: t, Status: s}
	}
	notReady := v1.PodCondition{Type: v1.ContainersReady, Status: fals, Reason: "ContainersNotReady", Message: "containers with unready status: [c]"}
	for _, tc := range []struct {
		name       string
		gates      []v1.PodReadinessGate
		containers v1.PodCondition
		ready      v1.PodCondition // before
		others     []v1.PodCondition
		want       v1.PodCondition // Ready after; LastTransitionTime t0 unless it changed (now)
	}{
		{name: "no gates: left alone", containers: cond(v1.ContainersReady, tru, t0), ready: cond(v1.PodReady, tru, t0),
			want: cond(v1.PodReady, tru, t0)},
		{name: "no gate condition yet", gates: gates, containers: cond(v1.ContainersReady, tru, t0), ready: cond(v1.PodReady, tru, t0),
			want: v1.PodCondition{Type: v1.PodReady, Status: fals, Reason: "ReadinessGatesNotReady", LastTransitionTime: now,
				Message: `corresponding condition of pod readiness gate "example.com/one" does not exist., corresponding condition of pod readiness gate "example.com/two" does not exist.`}},
		{name: "one gate True, the other missing", gates: gates, containers: cond(v1.ContainersReady, tru, t0), ready: cond(v1.PodReady, tru, t0),
			others: []v1.PodCondition{gate(g1, tru)},
			want: v1.PodCondition{Type: v1.PodReady, Status: fals, Reason: "ReadinessGatesNotReady", LastTransitionTime: now,
				Message: `corresponding condition of pod readiness gate "example.com/two" does not exist.`}},
		{name: "one gate False", gates: gates, containers: cond(v1.ContainersReady, tru, t0), ready: cond(v1.PodReady, fals, t0),
			others: []v1.PodCondition{gate(g1, fals), gate(g2, tru)},
			want: v1.PodCondition{Type: v1.PodReady, Status: fals, Reason: "ReadinessGatesNotReady", LastTransitionTime: t0,
				Message: `the status of pod readiness gate "example.com/one" is not "True", but False`}},
		{name: "a gate Unknown", gates: gates[:1], containers: cond(v1.ContainersReady, tru, t0), ready: cond(v1.PodReady, tru, t0),
			others: []v1.PodCondition{gate(g1, v1.ConditionUnknown)},
			want: v1.PodCondition{Type: v1.PodReady, Status: fals, Reason: "ReadinessGatesNotReady", LastTransitionTime: now,
				Message: `the status of pod readiness gate "example.com/one" is not "True", but Unknown`}},
		{name: "every gate True", gates: gates, containers: cond(v1.ContainersReady, tru, t0),
			ready:  v1.PodCondition{Type: v1.PodReady, Status: fals, Reason: "ReadinessGatesNotReady", Message: "old", LastTransitionTime: t0},
			others: []v1.PodCondition{gate(g2, tru), gate(g1, tru)},
			want:   cond(v1.PodReady, tru, now)},
		{name: "containers not ready: Ready says so, gates or not", gates: gates, containers: notReady,
			ready:  v1.PodCondition{Type: v1.PodReady, Status: fals, Reason: "ReadinessGatesNotReady", LastTransitionTime: t0},
			others: []v1.PodCondition{gate(g1, tru), gate(g2, tru)},
			want:   v1.PodCondition{Type: v1.PodReady, Status: fals, Reason: notReady.Reason, Message: notReady.Message, LastTransitionTime: t0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conds := []v1.PodCondition{cond(v1.PodScheduled, tru, t0), tc.containers, tc.ready}
			gateReady(tc.gates, tc.others, conds, nil, now)
			if got := conds[2]; got != tc.want {
				t.Errorf("Ready\n got %+v\nwant %+v", got, tc.want)
			}
			if conds[0] != cond(v1.PodScheduled, tru, t0) || conds[1] != tc.containers {
				t.Errorf("other conditions changed: %+v", conds[:2])
			}
		})
	}
}

// The status written to the API holds Ready back by the gates' conditions
// as the API has them, and keeps those conditions: they are another
// component's.
func TestMergeStatusReadinessGates(t *testing.T) {
	g := v1.PodConditionType("example.com/lb")
	gates := []v1.PodReadinessGate{{ConditionType: g}}
	local := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
		cond(v1.ContainersReady, v1.ConditionTrue, t0), cond(v1.PodReady, v1.ConditionTrue, t0)}}
	for _, tc := range []struct {
		name      string
		apiGate   *v1.PodCondition
		wantReady v1.ConditionStatus
	}{
		{"gate condition missing", nil, v1.ConditionFalse},
		{"gate condition False", &v1.PodCondition{Type: g, Status: v1.ConditionFalse, LastTransitionTime: t1}, v1.ConditionFalse},
		{"gate condition True", &v1.PodCondition{Type: g, Status: v1.ConditionTrue, LastTransitionTime: t1}, v1.ConditionTrue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionFalse, t0)}}
			if tc.apiGate != nil {
				api.Conditions = append(api.Conditions, *tc.apiGate)
			}
			got, _ := mergeStatus(mergeInput{api: api, local: local, readinessGates: gates, now: now})
			ready, ok := findCondition(got.Conditions, v1.PodReady)
			if !ok || ready.Status != tc.wantReady {
				t.Fatalf("Ready %+v, want %s", ready, tc.wantReady)
			}
			if tc.wantReady == v1.ConditionFalse && (ready.Reason != "ReadinessGatesNotReady" || ready.LastTransitionTime != t0) {
				t.Errorf("Ready %+v: want reason ReadinessGatesNotReady and the API's transition time", ready)
			}
			if tc.wantReady == v1.ConditionTrue && ready.LastTransitionTime != now {
				t.Errorf("Ready %+v: want it to transition now", ready)
			}
			if gc, ok := findCondition(got.Conditions, g); (tc.apiGate == nil) == ok || (ok && *gc != *tc.apiGate) {
				t.Errorf("gate condition %+v, want the API's %+v", gc, tc.apiGate)
			}
			if local.Conditions[1].Status != v1.ConditionTrue {
				t.Error("the local status was changed")
			}
		})
	}
}

// The recorded status follows the gates too: at SetPodStatus, at a probe
// change, and when the informer brings the API pod with a gate's condition
// changed (PodChanged), without a new status from the syncer.
func TestManagerReadinessGates(t *testing.T) {
	clk := clocktesting.NewFakeClock(now.Time)
	g := v1.PodConditionType("example.com/lb")
	pod := localPod("a", nil)
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: g}}
	m, err := New(Config{Clock: clk, Probes: &readiness{ready: true}})
	if err != nil {
		t.Fatal(err)
	}
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
		{Type: v1.ContainersReady, Status: v1.ConditionTrue}, {Type: v1.PodReady, Status: v1.ConditionTrue}}})
	ready := func(want v1.ConditionStatus, since time.Time) {
		t.Helper()
		st, _ := m.Get(pod.UID)
		c, ok := findCondition(st.Conditions, v1.PodReady)
		if !ok || c.Status != want || !c.LastTransitionTime.Time.Equal(since) {
			t.Errorf("Ready %+v, want %s since %v", c, want, since)
		}
	}
	ready(v1.ConditionFalse, now.Time)

	clk.Step(time.Minute)
	withGate := pod.DeepCopy()
	withGate.Status.Conditions = []v1.PodCondition{{Type: g, Status: v1.ConditionTrue}}
	m.PodChanged(withGate)
	ready(v1.ConditionTrue, now.Add(time.Minute))

	// A probe change recomputes Ready from the pod's own copy here (no API
	// server): the gate's condition is not in it.
	clk.Step(time.Minute)
	m.ProbesChanged(pod.UID)
	ready(v1.ConditionFalse, now.Add(2*time.Minute))
}
