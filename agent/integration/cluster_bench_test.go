package integration_test

// Cluster-mode measurements, as benchmarks (they need the control plane;
// the containerd ones need the runtime too):
//
//	go test -run '^$' -bench 'BenchmarkCluster' -benchtime 20x -timeout 30m ./agent/
//
// BenchmarkClusterPodLatency* create pods one after another (each
// iteration one pod), with the agent's default intervals, and report the median, over the iterations, of the
// time from the API's create to the API showing the pod Running, and from
// the delete (the pod's grace is 1 s; its container exits on SIGTERM) to
// the object's removal. BenchmarkClusterHundredPods* run 100 pods and
// report the test process's CPU share (of one CPU) and resident memory
// while they run, with the agent's default intervals: the agent and its
// API clients, and the embedded runtime, run inside the test process;
// containerd outside it. Run each in a process of its own (-bench with
// one name): memory a previous benchmark used may not be returned yet.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

func BenchmarkClusterPodLatencyEmbedded(b *testing.B) {
	m := join(b, agenttest.WithConfig(defaultIntervals))
	benchPodLatency(b, m.clusterNode, func(name string) *v1.Pod { return m.apiPod(name, 1, "main") })
}

func BenchmarkClusterPodLatencyContainerd(b *testing.B) {
	e := agenttest.NewCtrdEnv(b)
	n := newClusterNode(b)
	joinContainerd(e, n, defaultIntervals)
	benchPodLatency(b, n, func(name string) *v1.Pod { return n.busyboxPod(name, 1, agenttest.CtrdTrapper("main")) })
}

// benchPodLatency runs b.N pods one at a time.
func benchPodLatency(b *testing.B, n *clusterNode, newPod func(name string) *v1.Pod) {
	var toRunning, toRemoval []time.Duration
	ctx := context.Background()
	pods := n.c.Admin.CoreV1().Pods(n.ns)
	for i := 0; b.Loop(); i++ {
		name := fmt.Sprintf("lat-%d", i)
		w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
		if err != nil {
			b.Fatal(err)
		}
		created := time.Now()
		if _, err := pods.Create(ctx, newPod(name), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		waitEvent(b, w, name+" is Running", func(ev watch.Event) bool {
			p, ok := ev.Object.(*v1.Pod)
			return ok && p.Status.Phase == v1.PodRunning
		})
		toRunning = append(toRunning, time.Since(created))
		deleted := time.Now()
		if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
		waitEvent(b, w, name+" is removed", func(ev watch.Event) bool { return ev.Type == watch.Deleted })
		toRemoval = append(toRemoval, time.Since(deleted))
		w.Stop()
	}
	b.ReportMetric(median(toRunning).Seconds()*1000, "ms-create-to-Running")
	b.ReportMetric(median(toRemoval).Seconds()*1000, "ms-delete-to-removal")
	b.ReportMetric(0, "ns/op")
}

// waitEvent reads w until done says an event is the one awaited.
func waitEvent(b testing.TB, w watch.Interface, what string, done func(watch.Event) bool) {
	b.Helper()
	timeout := time.After(clusterTimeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				b.Fatalf("the watch ended before %s", what)
			}
			if done(ev) {
				return
			}
		case <-timeout:
			b.Fatalf("timed out waiting until %s", what)
		}
	}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// defaultIntervals sets the agent's polling back to its defaults (the
// test harnesses poll many times faster), so the CPU measured is what an
// agent run with its defaults spends.
func defaultIntervals(cfg *config.Config) {
	d := config.Default()
	cfg.FileCheckFrequency, cfg.HousekeepingInterval = d.FileCheckFrequency, d.HousekeepingInterval
	cfg.RuntimePollInterval, cfg.SyncFrequency = d.RuntimePollInterval, d.SyncFrequency
}

// hundred is the number of pods of BenchmarkClusterHundredPods*.
const hundred = 100

// steadyWindow is how long the agent's CPU use is measured while the pods
// run.
const steadyWindow = 30 * time.Second

func BenchmarkClusterHundredPodsEmbedded(b *testing.B) {
	m := join(b, agenttest.WithConfig(defaultIntervals))
	benchHundredPods(b, m.clusterNode, func(name string) *v1.Pod { return m.apiPod(name, 1, "main") })
}

func BenchmarkClusterHundredPodsContainerd(b *testing.B) {
	e := agenttest.NewCtrdEnv(b)
	n := newClusterNode(b)
	joinContainerd(e, n, defaultIntervals)
	benchHundredPods(b, n, func(name string) *v1.Pod { return n.busyboxPod(name, 1, agenttest.CtrdTrapper("main")) })
}

// benchHundredPods starts 100 pods, waits until all run, and measures the
// process's CPU time over steadyWindow and its resident memory. Each
// iteration is one window. At the end the pods are deleted through the API
// and the agent removes them, so none outlives the benchmark.
func benchHundredPods(b *testing.B, n *clusterNode, newPod func(name string) *v1.Pod) {
	ctx := context.Background()
	pods := n.c.Admin.CoreV1().Pods(n.ns)
	for i := range hundred {
		if _, err := pods.Create(ctx, newPod(fmt.Sprintf("many-%03d", i)), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	n.waitAPILong("100 pods run", func(ctx context.Context) (bool, error) {
		running := 0
		for _, p := range n.listPods(b) {
			if p.Status.Phase == v1.PodRunning {
				running++
			}
		}
		return running == hundred, nil
	})
	var cpu []float64
	for b.Loop() {
		before, start := cpuTime(b), time.Now()
		time.Sleep(steadyWindow)
		cpu = append(cpu, float64(cpuTime(b)-before)/float64(time.Since(start))*100)
	}
	slices.Sort(cpu)
	b.ReportMetric(cpu[len(cpu)/2], "%cpu")
	b.ReportMetric(float64(rssBytes(b))/(1<<20), "MiB-rss")
	b.ReportMetric(0, "ns/op")
	grace := int64(1)
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &grace}, metav1.ListOptions{}); err != nil {
		b.Fatal(err)
	}
	n.waitAPILong("the agent removed the 100 pods", func(context.Context) (bool, error) { return len(n.listPods(b)) == 0, nil })
}

// listPods lists the node's pods in the test's namespace.
func (n *clusterNode) listPods(tb testing.TB) []v1.Pod {
	tb.Helper()
	l, err := n.c.Admin.CoreV1().Pods(n.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return l.Items
}

// cpuTime is the process's user and system CPU time.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssBytes is the process's resident set size (VmRSS).
func rssBytes(tb testing.TB) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb << 10
		}
	}
	tb.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// waitAPILong is waitAPI for what 100 pods take: up to 5 minutes.
func (n *clusterNode) waitAPILong(what string, cond func(ctx context.Context) (bool, error)) {
	n.tb.Helper()
	n.waitAPIWithin(5*time.Minute, what, cond)
}
