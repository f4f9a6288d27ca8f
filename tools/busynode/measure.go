package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// options are run's flags.
type options struct {
	kubeconfig, node, endpoint, label, image string
	nodePID, runtimePID, round, pods         int
	settle, window, removalWait, timeout     time.Duration
}

// tracker records, per pod, when the benchmark asked and when the watch
// showed the answer.
type tracker struct {
	mu                              sync.Mutex
	created, running, deleted, gone map[string]time.Time
	changed                         chan struct{}
}

func newTracker() *tracker {
	return &tracker{
		created: map[string]time.Time{}, running: map[string]time.Time{},
		deleted: map[string]time.Time{}, gone: map[string]time.Time{},
		changed: make(chan struct{}, 1),
	}
}

// set records t under name in m once, and wakes a waiter.
func (t *tracker) set(m map[string]time.Time, name string, at time.Time) {
	t.mu.Lock()
	if _, ok := m[name]; !ok {
		m[name] = at
	}
	t.mu.Unlock()
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

func (t *tracker) count(m map[string]time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(m)
}

// latencies are to[name]-from[name] for every name in both, and the span
// from the earliest from to the latest to.
func (t *tracker) latencies(from, to map[string]time.Time) ([]time.Duration, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ds []time.Duration
	var first, last time.Time
	for name, a := range from {
		b, ok := to[name]
		if !ok {
			continue
		}
		ds = append(ds, b.Sub(a))
		if first.IsZero() || a.Before(first) {
			first = a
		}
		if b.After(last) {
			last = b
		}
	}
	return ds, last.Sub(first)
}

// waitCount waits until m has n entries.
func (t *tracker) waitCount(ctx context.Context, m map[string]time.Time, n int, what string) error {
	for t.count(m) < n {
		select {
		case <-t.changed:
		case <-ctx.Done():
			return fmt.Errorf("%s: %d of %d: %w", what, t.count(m), n, ctx.Err())
		}
	}
	return nil
}

// started is the pod startup SLI's end: Running, every container started.
func started(p *v1.Pod) bool {
	if p.Status.Phase != v1.PodRunning || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil || c.Started == nil || !*c.Started {
			return false
		}
	}
	return true
}

func (o options) pod(ns string, i int) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("busy-%03d", i), Namespace: ns},
		Spec: v1.PodSpec{
			NodeName:                      o.node,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			RestartPolicy:                 v1.RestartPolicyAlways,
			Containers: []v1.Container{{
				Name: "main", Image: o.image, ImagePullPolicy: v1.PullNever,
				// Idle: one sleep, which the shell waits for; SIGTERM ends the wait.
				Command: []string{"sh", "-c", `trap "exit 0" TERM; sleep 2147483647 & wait`},
			}},
		},
	}
}

func run(ctx context.Context, o options) (result, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return result{}, err
	}
	// The benchmark's own client must not be the bottleneck: 100 creates at
	// once go out at once.
	cfg.QPS, cfg.Burst = 1000, 2000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return result{}, err
	}
	rt, err := dialRuntime(o.endpoint)
	if err != nil {
		return result{}, err
	}
	defer rt.close()

	ns := fmt.Sprintf("busy-%s-%d-%d", o.label, o.round, time.Now().Unix())
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return result{}, err
	}
	defer func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	}()
	// The ServiceAccount admission refuses pods until the namespace's
	// default service account exists.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return result{}, fmt.Errorf("no default service account in %s: %w", ns, err)
	}

	t := newTracker()
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	observe := func(obj any) {
		if p, ok := obj.(*v1.Pod); ok && started(p) {
			t.set(t.running, p.Name, time.Now())
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, obj any) { observe(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*v1.Pod); ok {
				t.set(t.gone, p.Name, time.Now())
			}
		},
	}); err != nil {
		return result{}, err
	}
	stop := make(chan struct{})
	defer close(stop)
	f.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		return result{}, fmt.Errorf("the pod watch did not sync")
	}

	res := result{Node: o.label, Round: o.round, Pods: o.pods}
	// Create all at once.
	errs := make(chan error, o.pods)
	var wg sync.WaitGroup
	for i := range o.pods {
		p := o.pod(ns, i)
		wg.Go(func() {
			t.set(t.created, p.Name, time.Now())
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				errs <- fmt.Errorf("create %s: %w", p.Name, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return res, err
	}
	wctx, cancel := context.WithTimeout(ctx, o.timeout)
	err = t.waitCount(wctx, t.running, o.pods, "pods running")
	cancel()
	if err != nil {
		return res, err
	}
	starts, all := t.latencies(t.created, t.running)
	res.StartP50Ms, res.StartP90Ms, res.StartP99Ms = ms(percentile(starts, 0.5)), ms(percentile(starts, 0.9)), ms(percentile(starts, 0.99))
	res.AllRunningMs = ms(all)
	fmt.Fprintf(os.Stderr, "busynode: %s round %d: %d pods running after %v; idle window of %v in %v\n", o.label, o.round, o.pods, all.Round(time.Millisecond), o.window, o.settle)

	// Idle.
	time.Sleep(o.settle)
	if err := o.sampleIdle(&res); err != nil {
		return res, err
	}

	// Delete all at once; watch the runtime meanwhile.
	firstDelete := time.Now()
	var stopped, removed time.Duration = -1, -1
	pollCtx, stopPoll := context.WithCancel(ctx)
	pollDone := make(chan error, 1)
	go func() {
		pollDone <- wait.PollUntilContextTimeout(pollCtx, 100*time.Millisecond, o.removalWait, false, func(ctx context.Context) (bool, error) {
			c, err := rt.census(ctx, ns)
			if err != nil {
				return false, err
			}
			if stopped < 0 && c.stopped() {
				stopped = time.Since(firstDelete)
			}
			if c.removed() {
				removed = time.Since(firstDelete)
			}
			return removed >= 0, nil
		})
	}()
	errs = make(chan error, o.pods)
	for i := range o.pods {
		name := o.pod(ns, i).Name
		wg.Go(func() {
			t.set(t.deleted, name, time.Now())
			if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs <- fmt.Errorf("delete %s: %w", name, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		stopPoll()
		return res, err
	}
	wctx, cancel = context.WithTimeout(ctx, o.timeout)
	err = t.waitCount(wctx, t.gone, o.pods, "pods gone from the API")
	cancel()
	if err != nil {
		stopPoll()
		return res, err
	}
	deletes, allGone := t.latencies(t.deleted, t.gone)
	res.DeleteP50Ms, res.DeleteP99Ms, res.AllGoneMs = ms(percentile(deletes, 0.5)), ms(percentile(deletes, 0.99)), ms(allGone)
	perr := <-pollDone
	stopPoll()
	if perr != nil && !wait.Interrupted(perr) {
		return res, perr
	}
	res.StoppedMs, res.RemovedMs = -1, -1
	if stopped >= 0 {
		res.StoppedMs = ms(stopped)
	}
	if removed >= 0 {
		res.RemovedMs = ms(removed)
	}
	return res, nil
}

// sampleIdle measures the node's and the runtime's CPU over the window
// and the node's memory at its end.
func (o options) sampleIdle(res *result) error {
	n0, err := cpuTime(o.nodePID)
	if err != nil {
		return err
	}
	var r0 time.Duration
	if o.runtimePID > 0 {
		if r0, err = cpuTime(o.runtimePID); err != nil {
			return err
		}
	}
	start := time.Now()
	time.Sleep(o.window)
	n1, err := cpuTime(o.nodePID)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	res.IdleCPUPct = pct(n1-n0, elapsed)
	if o.runtimePID > 0 {
		r1, err := cpuTime(o.runtimePID)
		if err != nil {
			return err
		}
		res.RuntimeCPUPct = pct(r1-r0, elapsed)
	}
	m, err := memoryOf(o.nodePID)
	if err != nil {
		return err
	}
	res.RSSMiB, res.HWMMiB = mib(m.rss), mib(m.hwm)
	return nil
}

func pct(cpu, wall time.Duration) float64 {
	return float64(int64(float64(cpu)/float64(wall)*1000)) / 10
}

func mib(b int64) float64 { return float64(b*10>>20) / 10 }
