package podstatus

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/podlife/podlife/internal/clustertest"
)

// testEngine stands in for the pod lifecycle engine: the tests say whether
// a pod's containers could run and whether its runtime may be removed
// (both false unless set), and count the questions.
type testEngine struct {
	mu           sync.Mutex
	running      map[types.UID]bool
	removed      map[types.UID]bool
	removedAsked map[types.UID]int
}

func newTestEngine() *testEngine {
	return &testEngine{running: map[types.UID]bool{}, removed: map[types.UID]bool{}, removedAsked: map[types.UID]int{}}
}

func (e *testEngine) CouldHaveRunningContainers(uid types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running[uid]
}

func (e *testEngine) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.removedAsked[uid]++
	return e.removed[uid]
}

func (e *testEngine) setRunning(uid types.UID, running bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.running[uid] = running
}

func (e *testEngine) setRemoved(uid types.UID, removed bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.removed[uid] = removed
}

func (e *testEngine) timesRemovedAsked(uid types.UID) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.removedAsked[uid]
}

// listerPods is APIPods from an informer's lister, as the agent has it.
type listerPods struct{ lister corelisters.PodLister }

func (l listerPods) Get(namespace, name string) (*v1.Pod, bool) {
	pod, err := l.lister.Pods(namespace).Get(name)
	return pod, err == nil
}

// fixedPods is APIPods frozen on some copies: an informer that lags behind.
type fixedPods map[string]*v1.Pod

func (f fixedPods) Get(namespace, name string) (*v1.Pod, bool) {
	pod, ok := f[namespace+"/"+name]
	return pod, ok
}

// node is a test node of the real control plane: its identity's client,
// a namespace, and an informer on the pods bound to it.
type node struct {
	c      *clustertest.Cluster
	name   string
	ns     string
	client kubernetes.Interface
	pods   cache.SharedIndexInformer
	lister corelisters.PodLister
}

func newNode(t *testing.T) *node {
	c := clustertest.Require(t)
	n := &node{c: c, name: c.NodeName(t), ns: c.Namespace(t)}
	n.client = c.NodeClient(t, n.name)
	factory := informers.NewSharedInformerFactoryWithOptions(n.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.nodeName=" + n.name
	}))
	n.pods = factory.Core().V1().Pods().Informer()
	n.lister = factory.Core().V1().Pods().Lister()
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	t.Cleanup(func() { cancel(); factory.Shutdown() })
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer %v did not sync", typ)
		}
	}
	return n
}

// managerOptions vary the Manager a test runs.
type managerOptions struct {
	syncPeriod time.Duration
	// pods replaces the informer's lister.
	pods APIPods
	// noPodChanged leaves the informer's events out: only the resync and
	// the retries bring a pod back.
	noPodChanged bool
	// noRun does not run the Manager's loop.
	noRun bool
}

// startManager runs a Manager with the node's identity until the test ends.
func (n *node) startManager(t *testing.T, opts managerOptions) (*Manager, *testEngine) {
	t.Helper()
	engine := newTestEngine()
	pods := opts.pods
	if pods == nil {
		pods = listerPods{n.lister}
	}
	m, err := New(Config{
		Client: n.client, Engine: engine, Pods: pods,
		Logger:     slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registerer: prometheus.NewRegistry(),
		SyncPeriod: opts.syncPeriod,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !opts.noPodChanged {
		reg, err := n.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { m.PodChanged(obj.(*v1.Pod)) },
			UpdateFunc: func(_, obj any) { m.PodChanged(obj.(*v1.Pod)) },
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.pods.RemoveEventHandler(reg) })
	}
	if opts.noRun {
		return m, engine
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return m, engine
}

// testWriter sends the Manager's logs to the test's.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// createPod creates a pod bound to the node (the admin, as a scheduler
// would) with one container c.
func (n *node) createPod(t *testing.T, name string, edit ...func(*v1.Pod)) *v1.Pod {
	t.Helper()
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: n.ns, Name: name},
		Spec: v1.PodSpec{
			NodeName:                      n.name,
			Containers:                    []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			TerminationGracePeriodSeconds: ptr.To[int64](30),
		},
	}
	for _, e := range edit {
		e(pod)
	}
	created, err := n.c.Admin.CoreV1().Pods(n.ns).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s/%s: %v", n.ns, name, err)
	}
	return created
}

// waitPod polls the admin's view of the pod until ok holds for it.
func (n *node) waitPod(t *testing.T, name, what string, ok func(*v1.Pod) bool) *v1.Pod {
	t.Helper()
	var pod *v1.Pod
	waitFor(t, "pod "+n.ns+"/"+name+": "+what, func(ctx context.Context) (bool, error) {
		p, err := n.c.Admin.CoreV1().Pods(n.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		return ok(p), nil
	})
	return pod
}

func waitFor(t *testing.T, what string, cond wait.ConditionWithContextFunc) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// waitSyncs waits until the Manager counted at least n syncs with result.
func waitSyncs(t *testing.T, m *Manager, result string, n float64) {
	t.Helper()
	waitFor(t, "a sync with result "+result, func(context.Context) (bool, error) {
		return syncs(m, result) >= n, nil
	})
}

func syncs(m *Manager, result string) float64 {
	var d dto.Metric
	if err := m.metrics.syncs.WithLabelValues(result).Write(&d); err != nil {
		panic(err)
	}
	return d.GetCounter().GetValue()
}

// runningStatus is what the syncer reports for a running pod; restarts
// tells one such status from another.
func runningStatus(restarts int32) v1.PodStatus {
	started := metav1.NewTime(time.Now().Add(-time.Second))
	conds := []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue}, {Type: v1.PodInitialized, Status: v1.ConditionTrue}}
	for _, t := range []v1.PodConditionType{v1.ContainersReady, v1.PodReady} {
		conds = append(conds, v1.PodCondition{Type: t, Status: v1.ConditionTrue})
	}
	return v1.PodStatus{
		Phase:      v1.PodRunning,
		PodIP:      "10.88.0.7",
		PodIPs:     []v1.PodIP{{IP: "10.88.0.7"}},
		StartTime:  &started,
		Conditions: conds,
		ContainerStatuses: []v1.ContainerStatus{{
			Name: "c", Image: "registry.k8s.io/pause:3.10", ImageID: "sha256:abc", ContainerID: "cri://c1",
			Ready: true, Started: ptr.To(true), RestartCount: restarts,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: started}},
		}},
	}
}

// terminalStatus is what the syncer reports once the pod's container
// exited with code.
func terminalStatus(phase v1.PodPhase, code int32) v1.PodStatus {
	st := runningStatus(0)
	st.Phase = phase
	for i := range st.Conditions {
		if c := &st.Conditions[i]; c.Type == v1.PodReady || c.Type == v1.ContainersReady {
			c.Status = v1.ConditionFalse
		}
	}
	cs := &st.ContainerStatuses[0]
	cs.Ready, cs.Started = false, ptr.To(false)
	cs.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		ExitCode: code, Reason: "Completed", StartedAt: cs.State.Running.StartedAt,
		FinishedAt: metav1.Now(), ContainerID: cs.ContainerID,
	}}
	if code != 0 {
		cs.State.Terminated.Reason = "Error"
	}
	return st
}

func condition(pod *v1.Pod, t v1.PodConditionType) *v1.PodCondition {
	c, _ := findCondition(pod.Status.Conditions, t)
	return c
}

func restarts(pod *v1.Pod) int32 {
	if len(pod.Status.ContainerStatuses) == 0 {
		return -1
	}
	return pod.Status.ContainerStatuses[0].RestartCount
}
