package podstatus

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestClusterReadinessGates: as the conformance spec "Pods should support
// pod readiness gates" does, another client sets the gates' conditions
// through the status subresource; the agent keeps them and its Ready
// follows them, without a new status from the syncer.
func TestClusterReadinessGates(t *testing.T) {
	n := newNode(t)
	m, engine := n.startManager(t, managerOptions{})
	g1, g2 := "k8s.io/test-condition1", "k8s.io/test-condition2"
	pod := n.createPod(t, "gated", func(p *v1.Pod) {
		p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: v1.PodConditionType(g1)}, {ConditionType: v1.PodConditionType(g2)}}
	})
	engine.setRunning(pod.UID, true)
	m.SetPodStatus(pod, runningStatus(0))

	readyIs := func(want v1.ConditionStatus, reason string) func(*v1.Pod) bool {
		return func(p *v1.Pod) bool {
			c := condition(p, v1.PodReady)
			return p.Status.Phase == v1.PodRunning && c != nil && c.Status == want && c.Reason == reason
		}
	}
	got := n.waitPod(t, pod.Name, "Running, not Ready", readyIs(v1.ConditionFalse, "ReadinessGatesNotReady"))
	if c := condition(got, v1.PodReady); !strings.Contains(c.Message, g1) || !strings.Contains(c.Message, g2) {
		t.Errorf("Ready message %q, want both gates named", c.Message)
	}
	if c := condition(got, v1.ContainersReady); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("ContainersReady %+v, want True", c)
	}

	setGate := func(gate string, status v1.ConditionStatus) {
		t.Helper()
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q}]}}`, gate, status)
		if _, err := n.c.Admin.CoreV1().Pods(n.ns).Patch(context.Background(), pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("patch %s: %v", gate, err)
		}
	}
	setGate(g1, v1.ConditionTrue)
	got = n.waitPod(t, pod.Name, "only the second gate named", func(p *v1.Pod) bool {
		c := condition(p, v1.PodReady)
		return c != nil && c.Status == v1.ConditionFalse && !strings.Contains(c.Message, g1) && strings.Contains(c.Message, g2)
	})
	if c := condition(got, v1.PodConditionType(g1)); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("gate condition %s %+v, want kept True", g1, c)
	}

	setGate(g2, v1.ConditionTrue)
	n.waitPod(t, pod.Name, "Ready", readyIs(v1.ConditionTrue, ""))

	setGate(g1, v1.ConditionFalse)
	got = n.waitPod(t, pod.Name, "not Ready again", readyIs(v1.ConditionFalse, "ReadinessGatesNotReady"))
	if c := condition(got, v1.PodReady); !strings.Contains(c.Message, `"k8s.io/test-condition1" is not "True", but False`) {
		t.Errorf("Ready message %q", c.Message)
	}
	// A new status from the syncer keeps the gates' conditions and the
	// verdict.
	m.SetPodStatus(pod, runningStatus(1))
	got = n.waitPod(t, pod.Name, "restart count 1", func(p *v1.Pod) bool { return restarts(p) == 1 })
	if c := condition(got, v1.PodReady); c == nil || c.Status != v1.ConditionFalse {
		t.Errorf("Ready %+v after a new status, want False", c)
	}
	if c := condition(got, v1.PodConditionType(g2)); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("gate condition %s %+v, want kept True", g2, c)
	}
}
