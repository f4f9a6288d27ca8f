package podstatus

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// readinessGatesNotReady is the Ready condition's reason while a readiness
// gate holds it back (the kubelet's status.ReadinessGatesNotReady).
const readinessGatesNotReady = "ReadinessGatesNotReady"

// gateReady sets the Ready condition among conds as the kubelet's
// GeneratePodReadyCondition does for a pod with readiness gates: while
// ContainersReady is not True, Ready has its status, reason and message;
// else Ready is True only once the condition of every gate
// (spec.readinessGates[].conditionType) is in others, the conditions that
// other components set through the API, with status True; else False with
// reason ReadinessGatesNotReady and a message naming each gate that holds.
// The gates' conditions live in the API only, so the status manager, which
// reads the API's copy, applies them. A Ready condition whose status this
// makes differ from its own before, or from before's Ready when there is
// one (the API's, which the written status replaces), transitions at now.
// A pod without gates is left alone.
func gateReady(gates []v1.PodReadinessGate, others, conds, before []v1.PodCondition, now metav1.Time) {
	if len(gates) == 0 {
		return
	}
	ready, ok := findCondition(conds, v1.PodReady)
	containers, known := findCondition(conds, v1.ContainersReady)
	if !ok || !known {
		return
	}
	want := v1.PodCondition{Type: v1.PodReady, Status: containers.Status, Reason: containers.Reason, Message: containers.Message}
	if containers.Status == v1.ConditionTrue {
		if msg := gatesNotReady(gates, others); msg != "" {
			want.Status, want.Reason, want.Message = v1.ConditionFalse, readinessGatesNotReady, msg
		}
	}
	was := ready.Status
	if old, ok := findCondition(before, v1.PodReady); ok {
		was = old.Status
	}
	if was != want.Status {
		ready.LastTransitionTime = now
	}
	ready.Status, ready.Reason, ready.Message = want.Status, want.Reason, want.Message
}

// gatesNotReady is the kubelet's message for the gates whose condition in
// conds is missing or not True; "" when every gate passes.
func gatesNotReady(gates []v1.PodReadinessGate, conds []v1.PodCondition) string {
	var msgs []string
	for _, g := range gates {
		c, ok := findCondition(conds, g.ConditionType)
		switch {
		case !ok:
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(g.ConditionType)))
		case c.Status != v1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(g.ConditionType), c.Status))
		}
	}
	return strings.Join(msgs, ", ")
}
