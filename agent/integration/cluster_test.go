package integration_test

// Cluster mode on the embedded runtime, against the real control plane of
// tools/cluster-up.sh (internal/clustertest; the tests skip without it).
// Each test is a node of its own, with a node identity of its own, and
// works in a namespace of its own.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	agentnode "github.com/podlife/podlife/agent/node"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/clustertest"
)

// clusterTimeout bounds each wait for the API server to show an outcome.
const clusterTimeout = 30 * time.Second

// member is a test agent that joined the control plane as node `node`.
type member struct {
	*agenttest.Harness
	*clusterNode
}

// clusterNode is a node of the control plane, for a test: its name and
// identity, the test's namespace, and the API calls and waits of the
// cluster tests, whatever runtime the node's agent uses.
type clusterNode struct {
	tb         testing.TB
	c          *clustertest.Cluster
	node       string
	kubeconfig string // the node identity's
	ns         string
	// agentLog is the end of the agent's log, shown when a wait fails.
	agentLog func() string
}

// newClusterNode makes a node name, its identity and a namespace.
func newClusterNode(t testing.TB) *clusterNode {
	t.Helper()
	c := clustertest.Require(t)
	n := &clusterNode{tb: t, c: c, ns: c.Namespace(t), node: c.NodeName(t), agentLog: func() string { return "" }}
	n.kubeconfig = c.NodeKubeconfig(t, n.node)
	return n
}

// join runs an agent on the embedded runtime as a new node of the control
// plane; opts configure it further.
func join(t testing.TB, opts ...agenttest.Option) *member {
	t.Helper()
	m := &member{clusterNode: newClusterNode(t)}
	m.Harness = agenttest.Start(t, append([]agenttest.Option{m.asNode()}, opts...)...)
	m.agentLog = func() string { return m.Logs.Tail(60) }
	m.waitNodeReady()
	return m
}

// asNode configures an agent as the member's node.
func (m *member) asNode() agenttest.Option {
	return agenttest.WithConfig(func(cfg *config.Config) {
		cfg.NodeName = m.node
		cfg.Kubeconfig = m.kubeconfig
		cfg.Allocatable = agenttest.Resources("cpu=8,memory=16Gi")
	})
}

// restart stops the member's agent (its embedded runtime ends with it) and
// starts a new one as the same node; between the two, between() runs.
func (m *member) restart(between func()) {
	m.T.Helper()
	m.Cancel()
	if err := m.Harness.Wait(); err != nil {
		m.T.Fatalf("Run: %v", err)
	}
	between()
	m.Harness = agenttest.Start(m.T, m.asNode())
}

// waitNodeReady waits until the agent's Node is Ready.
func (m *clusterNode) waitNodeReady() {
	m.tb.Helper()
	m.waitAPI("node "+m.node+" is Ready", func(ctx context.Context) (bool, error) {
		n, err := m.c.Admin.CoreV1().Nodes().Get(ctx, m.node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady {
				return c.Status == v1.ConditionTrue, nil
			}
		}
		return false, nil
	})
}

// waitAPI polls cond until it holds, failing the test after clusterTimeout.
func (m *clusterNode) waitAPI(what string, cond func(ctx context.Context) (bool, error)) {
	m.tb.Helper()
	m.waitAPIWithin(clusterTimeout, what, cond)
}

// waitAPIWithin polls cond until it holds, failing the test after timeout.
func (m *clusterNode) waitAPIWithin(timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	m.tb.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, cond)
	if err != nil {
		m.tb.Fatalf("waiting until %s: %v\nagent log (last lines):\n%s", what, err, m.agentLog())
	}
}

// apiPod is a pod for this member's node: the scheduler places it (no
// nodeName) through its node selector.
func (m *clusterNode) apiPod(name string, grace int64, containers ...string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.ns},
		Spec: v1.PodSpec{
			NodeSelector:                  map[string]string{"kubernetes.io/hostname": m.node},
			TerminationGracePeriodSeconds: &grace,
		},
	}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: agenttest.Image})
	}
	return p
}

// create creates pod as the admin.
func (m *clusterNode) create(pod *v1.Pod) *v1.Pod {
	m.tb.Helper()
	out, err := m.c.Admin.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		m.tb.Fatalf("create pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	return out
}

// get is the API's pod, nil once it is gone.
func (m *clusterNode) apiGet(ctx context.Context, name string) (*v1.Pod, error) {
	p, err := m.c.Admin.CoreV1().Pods(m.ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return p, err
}

// waitPhase waits until the API shows the pod in phase, and returns it.
func (m *clusterNode) waitPhase(name string, phase v1.PodPhase) *v1.Pod {
	m.tb.Helper()
	var pod *v1.Pod
	m.waitAPI(fmt.Sprintf("pod %s/%s is %s in the API", m.ns, name, phase), func(ctx context.Context) (bool, error) {
		p, err := m.apiGet(ctx, name)
		pod = p
		return p != nil && p.Status.Phase == phase, err
	})
	return pod
}

// waitDeleted waits until the API object is gone.
func (m *clusterNode) waitDeleted(name string) {
	m.tb.Helper()
	m.waitAPI(fmt.Sprintf("pod %s/%s is gone from the API", m.ns, name), func(ctx context.Context) (bool, error) {
		p, err := m.apiGet(ctx, name)
		return p == nil && err == nil, err
	})
}

// kubectl runs kubectl as the admin and fails the test on an error.
func (m *clusterNode) kubectl(args ...string) string {
	m.tb.Helper()
	out, err := m.c.Kubectl(m.tb, args...)
	if err != nil {
		m.tb.Fatal(err)
	}
	return out
}

// graces are the deletion grace periods the engine was given for uid, in
// order, each once: an update that marks the pod deleted carries the
// deletion's grace period, and the last kill (the API object gone) the
// final 0.
func (m *member) graces(uid types.UID) []int64 {
	var out []int64
	for _, tr := range m.Rec.Of(string(uid)) {
		g := tr.Params.GraceOverride
		if tr.Params.Deleting && g != fsm.NoGrace && (len(out) == 0 || out[len(out)-1] != g) {
			out = append(out, g)
		}
	}
	return out
}

// TestClusterApplyRunsPod: `kubectl apply` of a pod without nodeName: the
// scheduler binds it to the node, the agent runs it and the API shows it
// Running with the kubelet's conditions; `kubectl delete` stops it and the
// agent removes the object once the runtime is done with it.
func TestClusterApplyRunsPod(t *testing.T) {
	m := join(t)
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: web, namespace: %s}
spec:
  nodeSelector: {kubernetes.io/hostname: %s}
  terminationGracePeriodSeconds: 3
  containers:
  - {name: main, image: %s}
`, m.ns, m.node, agenttest.Image)
	m.kubectlApply(manifest)
	pod := m.waitPhase("web", v1.PodRunning)
	if pod.Spec.NodeName != m.node {
		t.Errorf("nodeName %q, want %q (the scheduler's binding)", pod.Spec.NodeName, m.node)
	}
	want := map[v1.PodConditionType]v1.ConditionStatus{
		v1.PodScheduled: v1.ConditionTrue, v1.PodInitialized: v1.ConditionTrue, v1.ContainersReady: v1.ConditionTrue,
		v1.PodReady: v1.ConditionTrue, v1.PodReadyToStartContainers: v1.ConditionTrue,
	}
	for _, c := range pod.Status.Conditions {
		if w, ok := want[c.Type]; ok && c.Status != w {
			t.Errorf("condition %s = %s, want %s", c.Type, c.Status, w)
		}
		delete(want, c.Type)
	}
	if len(want) > 0 {
		t.Errorf("conditions missing: %v (have %v)", want, pod.Status.Conditions)
	}
	if pod.Status.PodIP == "" || len(pod.Status.PodIPs) == 0 || pod.Status.StartTime == nil {
		t.Errorf("podIP %q, podIPs %v, startTime %v: want all set", pod.Status.PodIP, pod.Status.PodIPs, pod.Status.StartTime)
	}
	// The node's InternalIP, as the kubelet writes it.
	if node, err := m.c.Admin.CoreV1().Nodes().Get(context.Background(), m.node, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if ips := agentnode.HostIPs(node.Status.Addresses); len(ips) == 0 || pod.Status.HostIP != ips[0] || len(pod.Status.HostIPs) != len(ips) {
		t.Errorf("hostIP %q, hostIPs %v; want the Node's %v", pod.Status.HostIP, pod.Status.HostIPs, ips)
	}
	if cs := pod.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Running == nil || !cs[0].Ready {
		t.Errorf("container statuses %+v, want main running and ready", cs)
	}
	if pod.Status.ObservedGeneration != pod.Generation {
		t.Errorf("observedGeneration %d, want the pod's generation %d", pod.Status.ObservedGeneration, pod.Generation)
	}
	if got := m.RunningContainers(string(pod.UID)); got["main"] == "" {
		t.Errorf("the runtime runs %v of the pod, want main", got)
	}

	m.kubectl("delete", "pod", "web", "-n", m.ns, "--grace-period=2", "--wait=false")
	m.waitDeleted("web")
	if !m.NothingRuns(string(pod.UID)) {
		t.Errorf("the pod's containers still run after its API object was removed")
	}
	if g := m.graces(pod.UID); len(g) == 0 || g[0] != 2 {
		t.Errorf("the engine's kills had grace %v, want the deletion's 2 first", g)
	}
}

// kubectlApply applies a manifest given on stdin.
func (m *clusterNode) kubectlApply(manifest string) {
	m.tb.Helper()
	if _, err := m.c.KubectlStdin(m.tb, manifest, "apply", "-f", "-"); err != nil {
		m.tb.Fatal(err)
	}
}

// TestClusterForceDelete: a pod force-deleted (gone from the API at once)
// is still stopped on the node, and nothing of it is left in the runtime.
func TestClusterForceDelete(t *testing.T) {
	m := join(t)
	pod := m.create(m.apiPod("forced", 30, "main"))
	m.waitPhase("forced", v1.PodRunning)
	m.kubectl("delete", "pod", "forced", "-n", m.ns, "--force", "--grace-period=0")
	m.Eventually("the force-deleted pod's containers stopped", func() bool { return m.NothingRuns(string(pod.UID)) })
	m.Eventually("the runtime holds nothing of the force-deleted pod", func() bool {
		return len(m.Sandboxes(string(pod.UID))) == 0 && len(m.Containers(string(pod.UID))) == 0
	})
	m.WaitGone(string(pod.UID))
}

// TestClusterEviction: an eviction through the API's eviction subresource
// (as kubectl drain does) ends with the pod stopped and deleted; the
// DisruptionTarget condition the eviction sets stays through the agent's
// status writes.
func TestClusterEviction(t *testing.T) {
	m := join(t)
	pod := m.create(m.apiPod("evicted", 2, "main"))
	m.waitPhase("evicted", v1.PodRunning)
	ctx := context.Background()
	w, err := m.c.Admin.CoreV1().Pods(m.ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", "evicted").String(), ResourceVersion: pod.ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "evicted", Namespace: m.ns}}
	if err := m.c.Admin.CoreV1().Pods(m.ns).EvictV1(ctx, ev); err != nil {
		t.Fatalf("evict: %v", err)
	}
	var last *v1.Pod
	waitEvent(t, w, "the evicted pod is removed", func(e watch.Event) bool {
		if p, ok := e.Object.(*v1.Pod); ok && e.Type != watch.Deleted {
			last = p
		}
		return e.Type == watch.Deleted
	})
	if last == nil || !hasCondition(last, v1.DisruptionTarget) {
		t.Errorf("the evicted pod's last status before its removal has no DisruptionTarget condition: %+v", last)
	}
	if !m.NothingRuns(string(pod.UID)) {
		t.Errorf("the evicted pod's containers still run")
	}
}

// hasCondition reports whether pod has condition c True.
func hasCondition(pod *v1.Pod, c v1.PodConditionType) bool {
	for _, cond := range pod.Status.Conditions {
		if cond.Type == c {
			return cond.Status == v1.ConditionTrue
		}
	}
	return false
}

// TestClusterAdmissionRejection: a pod that asks for more memory than the
// node has is written Failed with the admission's reason, and never runs.
func TestClusterAdmissionRejection(t *testing.T) {
	m := join(t)
	p := m.apiPod("huge", 1, "main")
	p.Spec.NodeName = m.node // the scheduler would not place it
	p.Spec.NodeSelector = nil
	p.Spec.Containers[0].Resources.Requests = agenttest.Resources("memory=64Gi")
	pod := m.create(p)
	got := m.waitPhase("huge", v1.PodFailed)
	if got.Status.Reason != "OutOfmemory" || !strings.Contains(got.Status.Message, "memory") {
		t.Errorf("status reason %q message %q, want OutOfmemory and a message about memory", got.Status.Reason, got.Status.Message)
	}
	if len(m.Containers(string(pod.UID))) != 0 {
		t.Errorf("a rejected pod has containers in the runtime")
	}
	out := m.kubectl("get", "events", "-n", m.ns, "--field-selector", "involvedObject.name=huge", "-o", "jsonpath={.items[*].reason}")
	if !strings.Contains(out, "OutOfmemory") {
		t.Errorf("events of the rejected pod: %q, want OutOfmemory", out)
	}
}

// TestClusterEvents: the agent's events about a pod reach the API server,
// as `kubectl get events` lists them.
func TestClusterEvents(t *testing.T) {
	m := join(t)
	m.create(m.apiPod("noisy", 1, "main"))
	m.waitPhase("noisy", v1.PodRunning)
	m.waitAPI("the pod's events are listed", func(ctx context.Context) (bool, error) {
		out, err := m.c.Kubectl(m.T, "get", "events", "-n", m.ns, "--field-selector", "involvedObject.name=noisy", "-o", "jsonpath={range .items[*]}{.reason}/{.source.component}/{.source.host} {end}")
		if err != nil {
			return false, err
		}
		for _, want := range []string{"Created", "Started"} {
			if !strings.Contains(out, want+"/podlife/"+m.node) {
				return false, nil
			}
		}
		return true, nil
	})
}

// TestClusterNodeLease: the agent registers its Node and renews its Lease
// in kube-node-lease.
func TestClusterNodeLease(t *testing.T) {
	taint := v1.Taint{Key: "podlife.dev/dedicated", Value: "ci", Effect: v1.TaintEffectNoSchedule}
	m := join(t, agenttest.WithConfig(func(cfg *config.Config) {
		cfg.NodeLabels = map[string]string{"podlife.dev/pool": "blue"}
		cfg.NodeIPs = []string{"10.9.8.7"}
		cfg.RegisterWithTaints = []v1.Taint{taint}
	}))
	n, err := m.c.Admin.CoreV1().Nodes().Get(context.Background(), m.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The kubelet's --node-labels, --node-ip and --register-with-taints.
	if n.Labels["podlife.dev/pool"] != "blue" || len(n.Status.Addresses) == 0 || n.Status.Addresses[0].Address != "10.9.8.7" ||
		!slices.ContainsFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.MatchTaint(&taint) && t.Value == "ci" }) {
		t.Errorf("labels %v, addresses %v, taints %v: want podlife.dev/pool=blue, InternalIP 10.9.8.7 and the registered taint", n.Labels, n.Status.Addresses, n.Spec.Taints)
	}
	if n.Status.Allocatable.Memory().Cmp(agenttest.Resources("memory=16Gi")[v1.ResourceMemory]) != 0 || n.Status.Allocatable.Pods().Value() == 0 {
		t.Errorf("allocatable %v, want memory 16Gi and a pod count", n.Status.Allocatable)
	}
	if n.Labels["kubernetes.io/hostname"] != m.node || n.Status.NodeInfo.ContainerRuntimeVersion == "" {
		t.Errorf("labels %v, runtime version %q", n.Labels, n.Status.NodeInfo.ContainerRuntimeVersion)
	}
	var first *metav1.MicroTime
	m.waitAPI("the lease is renewed", func(ctx context.Context) (bool, error) {
		l, err := m.c.Admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, m.node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil || l.Spec.RenewTime == nil {
			return false, err
		}
		if first == nil {
			first = l.Spec.RenewTime
			if h := l.Spec.HolderIdentity; h == nil || *h != m.node {
				t.Errorf("lease holder %v, want %s", h, m.node)
			}
			return false, nil
		}
		return l.Spec.RenewTime.After(first.Time), nil
	})
}

// TestClusterMirrorPod: a static pod gets a mirror pod in the API, which
// is recreated when deleted and deleted with the static pod.
func TestClusterMirrorPod(t *testing.T) {
	m := join(t)
	m.ensureNamespace(staticNamespace)
	p := agenttest.PodSpec{Name: "static", UID: agenttest.UID(7001), Containers: []string{"main"}}
	m.WritePod(p)
	mirrorName := "static-" + m.node
	var mirror *v1.Pod
	m.waitAPI("the mirror pod exists and is Running", func(ctx context.Context) (bool, error) {
		var err error
		mirror, err = m.c.Admin.CoreV1().Pods(staticNamespace).Get(ctx, mirrorName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && mirror.Status.Phase == v1.PodRunning, err
	})
	if mirror.Annotations["kubernetes.io/config.mirror"] == "" || mirror.Spec.NodeName != m.node {
		t.Errorf("mirror annotations %v, nodeName %q", mirror.Annotations, mirror.Spec.NodeName)
	}
	if got := m.Metric("kubelet_mirror_pods", nil); got != 1 {
		t.Errorf("kubelet_mirror_pods = %v, want 1", got)
	}
	zero := int64(0)
	if err := m.c.Admin.CoreV1().Pods(staticNamespace).Delete(context.Background(), mirrorName, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	m.waitAPI("the mirror pod is recreated", func(ctx context.Context) (bool, error) {
		again, err := m.c.Admin.CoreV1().Pods(staticNamespace).Get(ctx, mirrorName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && again.UID != mirror.UID, err
	})
	if !agenttest.IsRunning(m.Pod(p.UID)) {
		t.Errorf("deleting the mirror pod touched the static pod: %+v", m.Pod(p.UID))
	}
	m.Remove(p.File())
	m.waitAPI("the mirror pod is deleted with its static pod", func(ctx context.Context) (bool, error) {
		_, err := m.c.Admin.CoreV1().Pods(staticNamespace).Get(ctx, mirrorName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// staticNamespace is the namespace of the harness's static pods.
const staticNamespace = "test"

// ensureNamespace creates namespace ns unless it exists.
func (m *clusterNode) ensureNamespace(ns string) {
	m.tb.Helper()
	_, err := m.c.Admin.CoreV1().Namespaces().Create(context.Background(), &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		m.tb.Fatal(err)
	}
}

// TestClusterNodeShutdown: during a graceful node shutdown the Node is
// NotReady, saying why, and the pods are stopped and written Failed as the
// kubelet's shutdown manager writes them.
func TestClusterNodeShutdown(t *testing.T) {
	m := join(t, agenttest.WithConfig(func(cfg *config.Config) {
		cfg.ShutdownGracePeriod.Duration = 2 * time.Second
		cfg.ShutdownGracePeriodCriticalPods.Duration = time.Second
	}))
	m.create(m.apiPod("stopped", 1, "main"))
	m.waitPhase("stopped", v1.PodRunning)
	m.Agent.RequestShutdown()
	m.waitAPI("the Node is NotReady: node is shutting down", func(ctx context.Context) (bool, error) {
		n, err := m.c.Admin.CoreV1().Nodes().Get(ctx, m.node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady {
				return c.Status == v1.ConditionFalse && strings.Contains(c.Message, "node is shutting down"), nil
			}
		}
		return false, nil
	})
	if err := m.Harness.Wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	pod := m.waitPhase("stopped", v1.PodFailed)
	if pod.Status.Reason != "Terminated" {
		t.Errorf("status reason %q, want Terminated (node shutdown)", pod.Status.Reason)
	}
}
