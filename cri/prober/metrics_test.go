package prober

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
)

// prober_probe_total counts every run by kind and outcome, in the
// kubelet's labels, and a container's series go with its probes.
func TestProbeTotal(t *testing.T) {
	f := newFixture(t)
	pod := probePod(v1.Container{Name: "app", ReadinessProbe: execProbe("ready", v1.Probe{PeriodSeconds: 1})})
	f.m.UpdatePod(pod, []Running{{Name: "app", ID: "c1", StartedAt: epoch}})
	f.step(0, 1, 1)
	f.step(time.Second, 2, 1)
	f.runner.set("ready", Failure)
	f.step(time.Second, 3, 1)
	want := `
# HELP prober_probe_total Cumulative number of a liveness, readiness or startup probe for a container by result.
# TYPE prober_probe_total counter
prober_probe_total{container="app",namespace="ns",pod="web",pod_uid="uid-web",probe_type="Readiness",result="failed"} 1
prober_probe_total{container="app",namespace="ns",pod="web",pod_uid="uid-web",probe_type="Readiness",result="successful"} 2
`
	if err := testutil.GatherAndCompare(f.metrics, strings.NewReader(want), "prober_probe_total"); err != nil {
		t.Error(err)
	}
	f.m.UpdatePod(pod, nil)
	if n, err := testutil.GatherAndCount(f.metrics, "prober_probe_total"); err != nil || n != 0 {
		t.Errorf("after the container stopped: %d series (%v), want none", n, err)
	}
}
