package integration_test

// Cluster mode through faults: an apiserver restart, an apiserver outage,
// an agent restart while the API deletes a pod. The first two stop a
// control plane of their own (clustertest.StartPrivate).

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/clustertest"
)

// leaseRenewTime is when the node's lease was last renewed.
func (m *clusterNode) leaseRenewTime(ctx context.Context) (time.Time, error) {
	l, err := m.c.Admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, m.node, metav1.GetOptions{})
	if err != nil || l.Spec.RenewTime == nil {
		return time.Time{}, err
	}
	return l.Spec.RenewTime.Time, nil
}

// waitLeaseRenewedAfter waits until the lease was renewed after t0.
func (m *clusterNode) waitLeaseRenewedAfter(t0 time.Time) {
	m.tb.Helper()
	m.waitAPI("the node lease is renewed", func(ctx context.Context) (bool, error) {
		renewed, err := m.leaseRenewTime(ctx)
		return err == nil && renewed.After(t0), nil
	})
}

// crashWhileAway makes the pod's container exit (the agent restarts it),
// so its status changes while the API server cannot be told.
func (m *member) crashWhileAway(uid types.UID) {
	m.T.Helper()
	id := m.RunningContainers(string(uid))["main"]
	if err := m.Agent.Embedded().ExitContainer(id, 1); err != nil {
		m.T.Fatal(err)
	}
	m.Eventually("the agent restarted the container", func() bool {
		p := m.Pod(string(uid))
		return len(p.Containers) == 1 && p.Containers[0].Restarts == 1 && p.Containers[0].State == "running"
	})
}

// waitRestartCount waits until the API shows the pod's container restarted
// n times.
func (m *clusterNode) waitRestartCount(name string, n int32) {
	m.tb.Helper()
	m.waitAPI("the API shows the container's restart", func(ctx context.Context) (bool, error) {
		p, err := m.apiGet(ctx, name)
		return err == nil && p != nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount == n, nil
	})
}

// kills counts the engine's kills of uid.
func (m *member) kills(uid types.UID) int {
	n := 0
	for _, tr := range m.Rec.Of(string(uid)) {
		if tr.Event == fsm.Kill {
			n++
		}
	}
	return n
}

// TestClusterAPIServerRestart: the apiserver restarts; the pod keeps
// running, and once it is back the agent writes the status that changed
// meanwhile, sees new pods, and renews its lease.
func TestClusterAPIServerRestart(t *testing.T) {
	c := clustertest.StartPrivate(t)
	m := join(t)
	pod := m.create(m.apiPod("steady", 1, "main"))
	m.waitPhase("steady", v1.PodRunning)
	var down time.Time
	c.RestartAPIServer(t, func() {
		down = time.Now()
		m.crashWhileAway(pod.UID)
	})
	m.waitRestartCount("steady", 1)
	m.waitLeaseRenewedAfter(down)
	m.create(m.apiPod("after", 1, "main"))
	m.waitPhase("after", v1.PodRunning)
	if n := m.kills(pod.UID); n != 0 {
		t.Errorf("the engine killed the pod %d times across the apiserver restart, want 0", n)
	}
}

// TestClusterAPIServerOutage: the apiserver hangs for 30 s (connections
// stall rather than fail). Running pods keep running; afterwards the agent
// catches up as after a restart.
func TestClusterAPIServerOutage(t *testing.T) {
	c := clustertest.StartPrivate(t)
	m := join(t)
	pod := m.create(m.apiPod("steady", 1, "main"))
	m.waitPhase("steady", v1.PodRunning)
	var down time.Time
	c.PauseAPIServer(t, 30*time.Second, func() {
		down = time.Now()
		m.crashWhileAway(pod.UID)
	})
	if !agenttest.IsRunning(m.Pod(string(pod.UID))) {
		t.Errorf("after the outage the pod does not run: %+v", m.Pod(string(pod.UID)))
	}
	m.waitRestartCount("steady", 1)
	m.waitLeaseRenewedAfter(down.Add(30 * time.Second))
	m.create(m.apiPod("after", 1, "main"))
	m.waitPhase("after", v1.PodRunning)
	if n := m.kills(pod.UID); n != 0 {
		t.Errorf("the engine killed the pod %d times during the outage, want 0", n)
	}
}

// TestClusterAgentRestartWhileDeleting: the pod is deleted through the API
// while the agent is down. The restarted agent (on a new embedded runtime,
// in which nothing of the pod runs) starts no container of it, finishes
// it, and deletes the API object.
func TestClusterAgentRestartWhileDeleting(t *testing.T) {
	m := join(t)
	pod := m.create(m.apiPod("leaving", 30, "main"))
	m.waitPhase("leaving", v1.PodRunning)
	m.restart(func() {
		grace := int64(20)
		err := m.c.Admin.CoreV1().Pods(m.ns).Delete(context.Background(), "leaving", metav1.DeleteOptions{GracePeriodSeconds: &grace})
		if err != nil {
			t.Fatal(err)
		}
	})
	m.waitNodeReady()
	m.waitDeleted("leaving")
	if n := len(m.Sandboxes(string(pod.UID))) + len(m.Containers(string(pod.UID))); n != 0 {
		t.Errorf("the restarted agent created %d sandboxes and containers for a pod being deleted", n)
	}
	if m.Rec.Saw(string(pod.UID), agenttest.To(fsm.Running)) {
		t.Errorf("the restarted agent ran a pod being deleted: %s", agenttest.Describe(m.Rec.Of(string(pod.UID))))
	}
}

// TestClusterRestartKillsNothingBeforeTheFirstList: an agent restarted
// while the API server hangs finds its predecessor's pod running in the
// runtime. Until its first list of the node's pods arrives it kills none
// (the sources-ready gate: the pod looks like an orphan, but the API
// server may still want it); once the list arrives it adopts the pod,
// whose container never stopped.
func TestClusterRestartKillsNothingBeforeTheFirstList(t *testing.T) {
	c := clustertest.StartPrivate(t)
	rt := agenttest.OutlivingRuntime(t)
	onRuntime := agenttest.WithConfig(func(cfg *config.Config) { cfg.RuntimeEndpoint = rt.Endpoint() })
	m := join(t, onRuntime)
	pod := m.create(m.apiPod("kept", 1, "main"))
	m.waitPhase("kept", v1.PodRunning)
	original := m.RunningContainers(string(pod.UID))["main"]
	m.Cancel()
	if err := m.Harness.Wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	c.PauseAPIServer(t, 8*time.Second, func() {
		m.Harness = agenttest.Start(t, m.asNode(), onRuntime)
		time.Sleep(3 * time.Second) // 30 housekeeping intervals
		if got := m.RunningContainers(string(pod.UID))["main"]; got != original {
			t.Errorf("before the first list, the pod's container %q became %q", original, got)
		}
		if n := len(m.LogLines("waiting for the API server's first list")); n == 0 {
			t.Errorf("housekeeping never said it waits for the first list")
		}
	})
	m.Eventually("the restarted agent runs the pod", func() bool { return agenttest.IsRunning(m.Pods()[pod.UID]) })
	m.WaitHousekeepings(3)
	if got := m.RunningContainers(string(pod.UID))["main"]; got != original {
		t.Errorf("the pod's container %q became %q: the restarted agent stopped it", original, got)
	}
	if n := m.kills(pod.UID); n != 0 {
		t.Errorf("the restarted agent killed the pod %d times", n)
	}
}
