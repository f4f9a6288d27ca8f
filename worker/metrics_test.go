package worker

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	e := start(t, Options{Registerer: reg})
	a, b := newPod("a", "web", false), newPod("b", "db", true)
	e.update(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: a, StartTime: e.clock.Now()})
	e.update(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: b})
	e.update(UpdatePodOptions{UpdateType: SyncPodKill, RunningPod: &RunningPod{ID: "orphan", Name: "x", Namespace: "default"}})
	e.update(UpdatePodOptions{UpdateType: SyncPodKill, Pod: b})
	e.update(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: b}) // same UID again: restart after it finished
	e.w.SyncKnownPods([]*v1.Pod{a, b})

	want := `
# HELP kubelet_working_pods Number of pods the pod workers own, by lifecycle phase, config and static, as of the last SyncKnownPods.
# TYPE kubelet_working_pods gauge
kubelet_working_pods{config="desired",lifecycle="sync",static=""} 1
kubelet_working_pods{config="desired",lifecycle="sync",static="true"} 0
kubelet_working_pods{config="desired",lifecycle="terminated",static=""} 0
kubelet_working_pods{config="desired",lifecycle="terminated",static="true"} 0
kubelet_working_pods{config="desired",lifecycle="terminating",static=""} 0
kubelet_working_pods{config="desired",lifecycle="terminating",static="true"} 0
kubelet_working_pods{config="orphan",lifecycle="sync",static=""} 0
kubelet_working_pods{config="orphan",lifecycle="sync",static="true"} 0
kubelet_working_pods{config="orphan",lifecycle="terminated",static=""} 0
kubelet_working_pods{config="orphan",lifecycle="terminated",static="true"} 0
kubelet_working_pods{config="orphan",lifecycle="terminating",static=""} 0
kubelet_working_pods{config="orphan",lifecycle="terminating",static="true"} 0
kubelet_working_pods{config="runtime_only",lifecycle="sync",static="unknown"} 0
kubelet_working_pods{config="runtime_only",lifecycle="terminated",static="unknown"} 0
kubelet_working_pods{config="runtime_only",lifecycle="terminating",static="unknown"} 0
# HELP kubelet_restarted_pods_total Number of pods whose finished record was removed so that the same UID could start again.
# TYPE kubelet_restarted_pods_total counter
kubelet_restarted_pods_total{static="true"} 1
# HELP kubelet_orphaned_runtime_pods_total Number of pods found in the container runtime that the pod workers did not know.
# TYPE kubelet_orphaned_runtime_pods_total counter
kubelet_orphaned_runtime_pods_total 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kubelet_working_pods", "kubelet_restarted_pods_total", "kubelet_orphaned_runtime_pods_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "kubelet_pod_worker_duration_seconds"); n != 1 {
		t.Errorf("%d pod_worker_duration series, want 1 (only the update with a StartTime)", n)
	}
	if got := testutil.ToFloat64(e.w.core.metrics.transitions.WithLabelValues("Running", "Kill", "TerminationRequested")); got != 1 {
		t.Errorf("podlife_transitions_total{Running,Kill,TerminationRequested} = %v, want 1", got)
	}
	e.w.mu.Lock()
	_, err := e.w.core.machine.Fire(types.UID("a"), "", 200, fsm.Params{})
	e.w.mu.Unlock()
	if err == nil || testutil.CollectAndCount(reg, "podlife_guard_rejections_total") != 1 {
		t.Errorf("a rejected event was not counted: %v", err)
	}
}
