package integration_test

// Cluster mode on a real containerd: the tests need both the control plane
// (PODLIFE_CLUSTER_DIR) and the runtime (PODLIFE_CRI_ENDPOINT), and skip
// without either.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/critest"
)

// joinContainerd runs an agent on e's containerd as a new node of the control
// plane (a second call for the same clusterNode restarts it as that node);
// edits change its configuration further.
func joinContainerd(e *agenttest.CtrdEnv, n *clusterNode, edits ...func(*config.Config)) *agenttest.CtrdAgent {
	e.T.Helper()
	a := e.StartAgent(e.Dir+"/manifests-"+n.node, func(cfg *config.Config) {
		cfg.NodeName = n.node
		cfg.Kubeconfig = n.kubeconfig
		cfg.Allocatable = agenttest.Resources("cpu=4,memory=8Gi")
		for _, edit := range edits {
			edit(cfg)
		}
	})
	n.agentLog = func() string { return tail(a.Logs.String(), 60) }
	n.waitNodeReady()
	return a
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// busyboxPod is an API pod of busybox containers for node n.
func (n *clusterNode) busyboxPod(name string, grace int64, containers ...agenttest.CtrdContainer) *v1.Pod {
	p := n.apiPod(name, grace)
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{
			Name: c.Name, Image: critest.BusyboxImage, ImagePullPolicy: v1.PullNever, Command: c.Command,
		})
	}
	return p
}

// TestContainerdClusterPodRuns: `kubectl apply` of a pod without nodeName
// ends Running with its real container on containerd; `kubectl delete`
// with a grace period stops it with SIGTERM and removes the object and,
// in the background, the runtime's sandbox and container.
func TestContainerdClusterPodRuns(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	a := joinContainerd(e, n)
	n.kubectlApply(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: web, namespace: %s}
spec:
  nodeSelector: {kubernetes.io/hostname: %s}
  terminationGracePeriodSeconds: 10
  containers:
  - name: main
    image: %s
    imagePullPolicy: Never
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
`, n.ns, n.node, critest.BusyboxImage))
	pod := n.waitPhase("web", v1.PodRunning)
	uid := string(pod.UID)
	e.RemoveAtEnd(uid)
	cs := pod.Status.ContainerStatuses
	if len(cs) != 1 || !strings.HasPrefix(cs[0].ContainerID, "containerd://") || cs[0].State.Running == nil {
		t.Fatalf("container statuses %+v, want main running on containerd", cs)
	}
	id := strings.TrimPrefix(cs[0].ContainerID, "containerd://")
	if got := e.RunningContainers(uid)["main"]; got != id {
		t.Errorf("containerd runs %q as main, the API says %q", got, id)
	}
	w := e.Watch(uid, a.Obs.Poke(), "main")
	n.kubectl("delete", "pod", "web", "-n", n.ns, "--grace-period=10", "--wait=false")
	if main := w.Exited("main"); main.GetExitCode() != 0 {
		t.Errorf("main exited %d, want 0: it exits on SIGTERM", main.GetExitCode())
	}
	n.waitDeleted("web")
	e.WaitRuntimeGone(uid)
}

// TestContainerdClusterShorterSecondDelete: the container ignores
// SIGTERM, so only the end of the grace period stops it. A delete with a
// 300 s grace starts the termination; a second delete with 2 s shortens
// it: the container is killed long before 300 s, and the object removed.
func TestContainerdClusterShorterSecondDelete(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	a := joinContainerd(e, n)
	pod := n.create(n.busyboxPod("twice", 600, agenttest.CtrdIgnorer("main")))
	uid := string(pod.UID)
	e.RemoveAtEnd(uid)
	n.waitPhase("twice", v1.PodRunning)
	w := e.Watch(uid, a.Obs.Poke(), "main")
	pods := n.c.Admin.CoreV1().Pods(n.ns)
	long, short := int64(300), int64(2)
	if err := pods.Delete(context.Background(), "twice", metav1.DeleteOptions{GracePeriodSeconds: &long}); err != nil {
		t.Fatal(err)
	}
	agenttest.CtrdEventually(t, "the engine took the 300 s deletion", func() (bool, string) {
		return a.Obs.SawGrace(uid, long), fmt.Sprint(a.Obs.Events(uid))
	})
	deleted := time.Now()
	if err := pods.Delete(context.Background(), "twice", metav1.DeleteOptions{GracePeriodSeconds: &short}); err != nil {
		t.Fatal(err)
	}
	main, ok := w.ExitedWithin("main", 60*time.Second)
	if !ok {
		t.Fatalf("main still runs 60 s after the 2 s delete: the shorter grace was not applied")
	}
	t.Logf("main exited %d, %v after the second delete", main.GetExitCode(), agenttest.CtrdSince(deleted, main.GetFinishedAt()).Round(time.Millisecond))
	if main.GetExitCode() != 137 {
		t.Errorf("main exited %d, want 137 (SIGKILL at the end of the grace period)", main.GetExitCode())
	}
	n.waitDeleted("twice")
	e.WaitRuntimeGone(uid)
}

// TestContainerdClusterForceDelete: `kubectl delete --force
// --grace-period=0` removes the object at once; the agent still stops the
// container (it ignores SIGTERM, so it is killed) and removes everything.
func TestContainerdClusterForceDelete(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	joinContainerd(e, n)
	pod := n.create(n.busyboxPod("forced", 30, agenttest.CtrdIgnorer("main")))
	uid := string(pod.UID)
	e.RemoveAtEnd(uid)
	n.waitPhase("forced", v1.PodRunning)
	n.kubectl("delete", "pod", "forced", "-n", n.ns, "--force", "--grace-period=0")
	if p, err := n.apiGet(context.Background(), "forced"); err != nil || p != nil {
		t.Fatalf("after a force delete the API still has the pod (%v)", err)
	}
	e.WaitRuntimeGone(uid)
}

// TestContainerdClusterAgentRestartMidTermination: the agent stops while
// a pod is terminating (its container ignores SIGTERM, so it runs until
// its grace ends); the restarted agent resumes the termination, starts no
// container, and deletes the object once nothing of the pod runs.
func TestContainerdClusterAgentRestartMidTermination(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	a := joinContainerd(e, n)
	pod := n.create(n.busyboxPod("leaving", 600, agenttest.CtrdIgnorer("main")))
	uid := string(pod.UID)
	e.RemoveAtEnd(uid)
	n.waitPhase("leaving", v1.PodRunning)
	original := e.RunningContainers(uid)["main"]
	grace := int64(8)
	if err := n.c.Admin.CoreV1().Pods(n.ns).Delete(context.Background(), "leaving", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	agenttest.CtrdEventually(t, "the engine took the kill", func() (bool, string) {
		evs := a.Obs.Events(uid)
		return slices.Contains(evs, fsm.Kill), fmt.Sprint(evs)
	})
	if err := a.Stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	// containerd carries out a stop it was asked for even when the caller
	// goes away: the container may die at the end of its grace period
	// while no agent runs.
	t.Logf("agent stopped; the pod's running containers: %v", e.RunningContainers(uid))
	b := joinContainerd(e, n)
	n.waitDeleted("leaving")
	for _, c := range e.Containers(uid) {
		if c.Id != original {
			t.Errorf("the restarted agent created container %.12s (attempt %d) for a pod being deleted", c.Id, c.GetMetadata().GetAttempt())
		}
	}
	if b.Obs.Reached(uid, fsm.Running) {
		t.Errorf("the restarted agent's engine ran a pod being deleted: %v", b.Obs.Events(uid))
	}
	e.WaitRuntimeGone(uid)
}
