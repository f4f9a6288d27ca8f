package integration_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/logindtest"
)

// TestClusterNodeShutdownFromLogind: logind's PrepareForShutdown(true)
// turns the Node NotReady ("node is shutting down") and stops the pods
// (Failed, reason Terminated) before the inhibitor lock is released;
// PrepareForShutdown(false) makes the Node Ready again, and the agent
// takes a new lock.
func TestClusterNodeShutdownFromLogind(t *testing.T) {
	bus := logindtest.StartBus(t)
	logind := logindtest.StartLogind(t, bus.Address, time.Minute)
	m := join(t, agenttest.WithSystemBus(bus.Address), agenttest.WithConfig(func(cfg *config.Config) {
		cfg.ShutdownGracePeriod.Duration = 2 * time.Second
		cfg.ShutdownGracePeriodCriticalPods.Duration = time.Second
	}))
	m.create(m.apiPod("stopped", 1, "main"))
	m.waitPhase("stopped", v1.PodRunning)
	logind.WaitLocks("the agent took the lock", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 1 })

	logind.PrepareForShutdown(true)
	m.waitAPI("the Node is NotReady: node is shutting down", func(ctx context.Context) (bool, error) {
		return nodeReady(ctx, m) == "False: node is shutting down", nil
	})
	logind.WaitLocks("the lock released", func(l []logindtest.Lock) bool { return l[0].Released })
	pod := m.waitPhase("stopped", v1.PodFailed)
	if pod.Status.Reason != "Terminated" {
		t.Errorf("status reason %q, want Terminated (node shutdown)", pod.Status.Reason)
	}

	logind.PrepareForShutdown(false)
	m.waitAPI("the Node is Ready again", func(ctx context.Context) (bool, error) {
		return strings.HasPrefix(nodeReady(ctx, m), "True"), nil
	})
	logind.WaitLocks("a new lock", func(l []logindtest.Lock) bool { return len(l) == 2 && logindtest.Held(l) == 1 })
}

// nodeReady is the Node's Ready condition as "Status: message"; "" when
// it has none or cannot be read.
func nodeReady(ctx context.Context, m *member) string {
	n, err := m.c.Admin.CoreV1().Nodes().Get(ctx, m.node, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return string(c.Status) + ": " + c.Message
		}
	}
	return ""
}
