package node

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/podlife/podlife/internal/clustertest"
)

// testConfig is a Manager configuration for the node name with the node's
// own identity, updating its status every 100 ms. The node's Lease is
// deleted when the test ends, at once rather than when the garbage collector
// follows its owner reference to the deleted Node.
func testConfig(t *testing.T, c *clustertest.Cluster, name string) Config {
	t.Cleanup(func() {
		err := c.Admin.CoordinationV1().Leases(v1.NamespaceNodeLease).Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("delete lease %s: %v", name, err)
		}
	})
	return Config{
		Client:                c.NodeClient(t, name),
		NodeName:              name,
		Capacity:              fullCapacity,
		Allocatable:           v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m"), v1.ResourceMemory: resource.MustParse("3Gi"), v1.ResourcePods: resource.MustParse("110")},
		Addresses:             []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.9.8.7"}, {Type: v1.NodeHostName, Address: name}},
		RuntimeVersion:        "podlife-embedded://0.1",
		AgentVersion:          "v1.37.2-podlife",
		Labels:                map[string]string{"podlife.dev/pool": "blue", "node.kubernetes.io/instance-type": "test"},
		Taints:                []v1.Taint{{Key: "podlife.dev/dedicated", Value: "ci", Effect: v1.TaintEffectNoSchedule}},
		StatusUpdateFrequency: 100 * time.Millisecond,
		RenewInterval:         500 * time.Millisecond,
	}
}

// registered waits until the Manager registered its Node and returns it
// as the admin reads it.
func registered(t *testing.T, c *clustertest.Cluster, m *Manager) *v1.Node {
	t.Helper()
	eventually(t, "the node registered", func() (bool, error) { _, ok := m.Node(); return ok, nil })
	node, err := c.Admin.CoreV1().Nodes().Get(context.Background(), m.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return node
}

func TestRegisterCreatesTheNode(t *testing.T) {
	c := clustertest.Require(t)
	name := c.NodeName(t)
	cfg := testConfig(t, c, name)
	m, _ := runManager(t, cfg)
	node := registered(t, c, m)

	if own, _ := m.Node(); own.UID != node.UID {
		t.Errorf("Manager.Node UID %s, the API's %s", own.UID, node.UID)
	}
	for k, v := range map[string]string{
		v1.LabelHostname: name, v1.LabelOSStable: runtime.GOOS, v1.LabelArchStable: runtime.GOARCH,
		"podlife.dev/pool": "blue", "node.kubernetes.io/instance-type": "test",
	} {
		if got, ok := node.Labels[k]; !ok || got != v {
			t.Errorf("label %s=%q, want %q", k, got, v)
		}
	}
	// The node lifecycle controller may have added its own (not-ready).
	if !slices.ContainsFunc(node.Spec.Taints, func(t v1.Taint) bool { return t.MatchTaint(&cfg.Taints[0]) && t.Value == "ci" }) {
		t.Errorf("taints %v, want the registered podlife.dev/dedicated=ci:NoSchedule among them", node.Spec.Taints)
	}
	for name, want := range cfg.Capacity {
		if got := node.Status.Capacity[name]; got.Cmp(want) != 0 {
			t.Errorf("capacity %s %v, want %v", name, got.String(), want.String())
		}
	}
	if got := node.Status.Allocatable[v1.ResourceCPU]; got.Cmp(resource.MustParse("1500m")) != 0 {
		t.Errorf("allocatable cpu %v, want 1500m", got.String())
	}
	if len(node.Status.Addresses) != 2 || node.Status.Addresses[0] != cfg.Addresses[0] || node.Status.Addresses[1] != cfg.Addresses[1] {
		t.Errorf("addresses %v, want %v", node.Status.Addresses, cfg.Addresses)
	}
	info := node.Status.NodeInfo
	if info.KubeletVersion != "v1.37.2-podlife" || info.ContainerRuntimeVersion != "podlife-embedded://0.1" ||
		info.OperatingSystem != runtime.GOOS || info.Architecture != runtime.GOARCH || info.OSImage == "" {
		t.Errorf("node info %+v", info)
	}
	for field, path := range map[*string]string{&info.MachineID: "/etc/machine-id", &info.BootID: "/proc/sys/kernel/random/boot_id", &info.KernelVersion: "/proc/sys/kernel/osrelease"} {
		if b, err := os.ReadFile(path); err == nil && *field != strings.TrimSpace(string(b)) {
			t.Errorf("node info from %s: %q, want %q", path, *field, strings.TrimSpace(string(b)))
		}
	}
	want := map[v1.NodeConditionType][2]string{
		v1.NodeReady:          {string(v1.ConditionTrue), ReasonReady},
		v1.NodeMemoryPressure: {string(v1.ConditionFalse), "KubeletHasSufficientMemory"},
		v1.NodeDiskPressure:   {string(v1.ConditionFalse), "KubeletHasNoDiskPressure"},
		v1.NodePIDPressure:    {string(v1.ConditionFalse), "KubeletHasSufficientPID"},
	}
	eventually(t, "the conditions", func() (bool, error) {
		node, err := c.Admin.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for ct, w := range want {
			if cond := condition(node, ct); cond == nil || string(cond.Status) != w[0] || cond.Reason != w[1] {
				return false, nil
			}
		}
		return condition(node, v1.NodeReady).Message == MessageReady, nil
	})
}

// TestRestartAdoptsTheNode: a second Manager for the same name (an agent
// restart) keeps the Node, its UID, and brings its labels and status up to
// date; a label it does not own stays.
func TestRestartAdoptsTheNode(t *testing.T) {
	c := clustertest.Require(t)
	name := c.NodeName(t)
	ctx := context.Background()
	first, stop := runManager(t, testConfig(t, c, name))
	uid := registered(t, c, first).UID
	stop()
	if _, err := c.Kubectl(t, "label", "node", name, "admin-label=kept"); err != nil {
		t.Fatal(err)
	}

	cfg := testConfig(t, c, name)
	cfg.AgentVersion = "v1.37.3-podlife"
	cfg.Labels["podlife.dev/pool"] = "green"
	second, _ := runManager(t, cfg)
	if got := registered(t, c, second).UID; got != uid {
		t.Fatalf("the restarted Manager's node has UID %s, want the first one's %s", got, uid)
	}
	eventually(t, "labels and status brought up to date", func() (bool, error) {
		node, err := c.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return node.UID == uid && node.Labels["podlife.dev/pool"] == "green" && node.Labels["admin-label"] == "kept" &&
			node.Status.NodeInfo.KubeletVersion == "v1.37.3-podlife", nil
	})
}

// getLease returns the node's Lease as the admin reads it.
func getLease(ctx context.Context, c *clustertest.Cluster, name string) (*coordinationv1.Lease, error) {
	return c.Admin.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
}

func TestLeaseIsCreatedAndRenewed(t *testing.T) {
	c := clustertest.Require(t)
	name := c.NodeName(t)
	ctx := context.Background()
	m, _ := runManager(t, testConfig(t, c, name))
	node := registered(t, c, m)

	var first *coordinationv1.Lease
	eventually(t, "the lease", func() (bool, error) {
		var err error
		first, err = getLease(ctx, c, name)
		return err == nil, err
	})
	if h := first.Spec.HolderIdentity; h == nil || *h != name {
		t.Errorf("holder %v, want %s", h, name)
	}
	if d := first.Spec.LeaseDurationSeconds; d == nil || *d != 40 {
		t.Errorf("duration %v, want 40 s", d)
	}
	if refs := first.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Node" || refs[0].APIVersion != "v1" ||
		refs[0].Name != name || refs[0].UID != node.UID {
		t.Errorf("owner references %+v, want the Node %s (UID %s)", refs, name, node.UID)
	}
	renewedAfter(t, ctx, c, name, first.Spec.RenewTime.Time)
}

// renewedAfter waits until the node's Lease is renewed after t0.
func renewedAfter(t *testing.T, ctx context.Context, c *clustertest.Cluster, name string, t0 time.Time) {
	t.Helper()
	eventually(t, "the lease renewed after "+t0.Format(time.RFC3339Nano), func() (bool, error) {
		l, err := getLease(ctx, c, name)
		if err != nil {
			return false, err
		}
		return l.Spec.RenewTime != nil && l.Spec.RenewTime.After(t0), nil
	})
}

// TestLeaseAndStatusSurviveAnOutage cuts the Manager off the apiserver for
// a while (a proxy between them closes every connection and refuses new
// ones); once it is back, the Lease is renewed and the status written
// again, without a restart.
func TestLeaseAndStatusSurviveAnOutage(t *testing.T) {
	c := clustertest.Require(t)
	name := c.NodeName(t)
	ctx := context.Background()

	server, err := url.Parse(c.Server)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startOutageProxy(t, server.Host)
	restCfg, err := clientcmd.BuildConfigFromFlags("", c.NodeKubeconfig(t, name))
	if err != nil {
		t.Fatal(err)
	}
	restCfg.Host = "https://" + proxy.addr
	cfg := testConfig(t, c, name)
	cfg.Client = kubernetes.NewForConfigOrDie(restCfg)
	var ready atomic.Bool
	ready.Store(true)
	cfg.Ready = func() (bool, string, string) { return ready.Load(), "Test", "told not to be ready" }
	m, _ := runManager(t, cfg)
	registered(t, c, m)
	renewedAfter(t, ctx, c, name, time.Now())

	proxy.setDown(true)
	time.Sleep(time.Second) // a renewal in flight lands
	atOutage, err := getLease(ctx, c, name)
	if err != nil {
		t.Fatal(err)
	}
	ready.Store(false)
	time.Sleep(3 * time.Second) // several renew intervals and status updates fail
	beforeBack, err := getLease(ctx, c, name)
	if err != nil {
		t.Fatal(err)
	}
	if !beforeBack.Spec.RenewTime.Equal(atOutage.Spec.RenewTime) {
		t.Fatalf("the lease was renewed during the outage (%v, then %v): the proxy does not cut the Manager off", atOutage.Spec.RenewTime, beforeBack.Spec.RenewTime)
	}
	if node, err := c.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil || condition(node, v1.NodeReady).Status != v1.ConditionTrue {
		t.Fatalf("the status was written during the outage: %v", err)
	}

	proxy.setDown(false)
	renewedAfter(t, ctx, c, name, beforeBack.Spec.RenewTime.Time)
	eventually(t, "the status written after the outage", func() (bool, error) {
		node, err := c.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return condition(node, v1.NodeReady).Status == v1.ConditionFalse, nil
	})
}

// TestStatusFollowsReady: the Ready condition follows Config.Ready, with a
// new transition time at each change.
func TestStatusFollowsReady(t *testing.T) {
	c := clustertest.Require(t)
	name := c.NodeName(t)
	ctx := context.Background()
	var ready atomic.Bool
	ready.Store(true)
	cfg := testConfig(t, c, name)
	cfg.Ready = func() (bool, string, string) {
		if ready.Load() {
			return true, "", ""
		}
		return false, "ContainerRuntimeDown", "container runtime is down"
	}
	m, _ := runManager(t, cfg)
	registered(t, c, m)

	readyIs := func(status v1.ConditionStatus, reason, message string) *v1.NodeCondition {
		t.Helper()
		var got *v1.NodeCondition
		eventually(t, "Ready "+string(status)+" "+reason, func() (bool, error) {
			node, err := c.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			got = condition(node, v1.NodeReady)
			return got != nil && got.Status == status && got.Reason == reason && got.Message == message, nil
		})
		return got
	}
	first := readyIs(v1.ConditionTrue, ReasonReady, MessageReady)
	time.Sleep(1100 * time.Millisecond) // transition times have a resolution of a second
	ready.Store(false)
	down := readyIs(v1.ConditionFalse, "ContainerRuntimeDown", "container runtime is down")
	if !down.LastTransitionTime.After(first.LastTransitionTime.Time) {
		t.Errorf("transition time %v not after %v", down.LastTransitionTime, first.LastTransitionTime)
	}
	ready.Store(true)
	readyIs(v1.ConditionTrue, ReasonReady, MessageReady)
}

// TestUnchangedStatusIsNotRewritten: with nothing changed, the status is
// not written before StatusReportFrequency (change detection ignores
// heartbeats), and is written once it passed. The Node's status is compared,
// not its resourceVersion: the node lifecycle controller writes the Node
// too (it lifts the not-ready taint once the node is Ready).
func TestUnchangedStatusIsNotRewritten(t *testing.T) {
	c := clustertest.Require(t)
	name := c.NodeName(t)
	ctx := context.Background()
	cfg := testConfig(t, c, name)
	cfg.StatusReportFrequency = time.Hour
	m, stop := runManager(t, cfg)
	registered(t, c, m)
	eventually(t, "the first status", func() (bool, error) {
		n, ok := m.Node()
		return ok && condition(n, v1.NodeReady) != nil, nil
	})
	before, err := c.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // 20 status updates
	after, err := c.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(before.Status, after.Status) {
		t.Errorf("the unchanged node's status was written: Ready heartbeat %v -> %v",
			condition(before, v1.NodeReady).LastHeartbeatTime, condition(after, v1.NodeReady).LastHeartbeatTime)
	}
	stop()

	cfg = testConfig(t, c, name)
	cfg.StatusReportFrequency = time.Second
	runManager(t, cfg)
	heartbeat := condition(after, v1.NodeReady).LastHeartbeatTime
	eventually(t, "a heartbeat after StatusReportFrequency", func() (bool, error) {
		node, err := c.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		hb := condition(node, v1.NodeReady).LastHeartbeatTime
		return hb.After(heartbeat.Add(time.Second)), nil
	})
}

// TestSetShuttingDown: the Node turns not ready at once, not at the next
// status update (an hour away here), before SetShuttingDown returns.
func TestSetShuttingDown(t *testing.T) {
	c := clustertest.Require(t)
	name := c.NodeName(t)
	ctx := context.Background()
	cfg := testConfig(t, c, name)
	cfg.StatusUpdateFrequency = time.Hour
	m, _ := runManager(t, cfg)
	registered(t, c, m)
	eventually(t, "ready", func() (bool, error) {
		n, ok := m.Node()
		return ok && readyStatus(n) == v1.ConditionTrue, nil
	})
	m.SetShuttingDown(ctx)
	// Written when it returns, not eventually.
	node, err := c.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := condition(node, v1.NodeReady); r.Status != v1.ConditionFalse || r.Reason != ReasonNotReady || r.Message != MessageShuttingDown {
		t.Errorf("Ready condition when SetShuttingDown returned: %s %s %q; want False %s %q", r.Status, r.Reason, r.Message, ReasonNotReady, MessageShuttingDown)
	}

	// A cancelled shutdown (logind's PrepareForShutdown(false)): Ready
	// again without waiting for the next status update.
	m.ClearShuttingDown()
	eventually(t, "ready again after ClearShuttingDown", func() (bool, error) {
		node, err := c.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return readyStatus(node) == v1.ConditionTrue, nil
	})
	// The next shutdown waits for its own write again.
	m.SetShuttingDown(ctx)
	node, err = c.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := condition(node, v1.NodeReady); r.Status != v1.ConditionFalse || r.Message != MessageShuttingDown {
		t.Errorf("Ready condition when the second SetShuttingDown returned: %s %q; want False %q", r.Status, r.Message, MessageShuttingDown)
	}
}

// TestNodeAuthorizerRefusesAnotherNode checks the identity the Manager is
// given: a node cannot register another node, nor write its status.
func TestNodeAuthorizerRefusesAnotherNode(t *testing.T) {
	c := clustertest.Require(t)
	ctx := context.Background()
	self, other := c.NodeName(t), c.NodeName(t)
	cfg := testConfig(t, c, other)
	cfg.Client = c.NodeClient(t, self)
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.tryRegister(ctx); err == nil {
		t.Fatalf("node %s registered node %s", self, other)
	}
	if _, err := c.Admin.CoreV1().Nodes().Get(ctx, other, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("node %s: %v, want not found", other, err)
	}

	// The other node exists (its own Manager registered it): its status is
	// still not self's to write.
	owner, _ := runManager(t, testConfig(t, c, other))
	registered(t, c, owner)
	var lastReport time.Time
	err = m.updateStatus(ctx, &lastReport)
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("node %s wrote the status of node %s: %v", self, other, err)
	}
	_, err = cfg.Client.CoreV1().Nodes().Patch(ctx, other, types.MergePatchType, []byte(`{"metadata":{"labels":{"stolen":"yes"}}}`), metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("node %s labelled node %s: %v, want forbidden", self, other, err)
	}
}

// TestStatusFollowsDeviceResources: the device plugins' resources
// (Config.DeviceResources) are set over the node's own capacity and
// allocatable; a resource no longer named keeps its last value, as the
// kubelet leaves it (the device manager names a dropped resource with 0).
func TestStatusFollowsDeviceResources(t *testing.T) {
	c := clustertest.Require(t)
	name := c.NodeName(t)
	ctx := context.Background()
	type lists struct{ capacity, allocatable v1.ResourceList }
	var devices atomic.Pointer[lists]
	devices.Store(&lists{})
	cfg := testConfig(t, c, name)
	cfg.DeviceResources = func() (v1.ResourceList, v1.ResourceList) {
		l := devices.Load()
		return l.capacity, l.allocatable
	}
	m, _ := runManager(t, cfg)
	registered(t, c, m)
	const gpu = v1.ResourceName("test.device/gpu")
	qty := func(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
	for _, step := range []struct {
		set                   *lists
		capacity, allocatable int64
	}{
		{&lists{v1.ResourceList{gpu: qty(2)}, v1.ResourceList{gpu: qty(2)}}, 2, 2},
		{&lists{v1.ResourceList{gpu: qty(2)}, v1.ResourceList{gpu: qty(1)}}, 2, 1},
		{&lists{v1.ResourceList{gpu: qty(0)}, v1.ResourceList{gpu: qty(0)}}, 0, 0},
		{&lists{v1.ResourceList{gpu: qty(3)}, v1.ResourceList{gpu: qty(3)}}, 3, 3},
		{&lists{}, 3, 3},
	} {
		devices.Store(step.set)
		m.ResourcesChanged()
		eventually(t, fmt.Sprintf("%s capacity %d allocatable %d", gpu, step.capacity, step.allocatable), func() (bool, error) {
			node, err := c.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			capacity, cok := node.Status.Capacity[gpu]
			allocatable, aok := node.Status.Allocatable[gpu]
			cpu := node.Status.Allocatable[v1.ResourceCPU]
			return cok && aok && capacity.Value() == step.capacity && allocatable.Value() == step.allocatable && cpu.String() == "1500m", nil
		})
	}
}
