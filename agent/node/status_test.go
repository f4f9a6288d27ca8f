package node

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWithDesired(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	desired := desiredState{
		labels:      OwnLabels("n1", map[string]string{"team": "a"}),
		capacity:    fullCapacity,
		allocatable: fullCapacity,
		addresses:   []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.1.2.3"}, {Type: v1.NodeHostName, Address: "n1"}},
		nodeInfo:    v1.NodeSystemInfo{KubeletVersion: "v1.37.2-podlife", OperatingSystem: "linux"},
		kubeletPort: 10250,
		readiness:   readiness{ok: true},
	}
	fresh, changed := withDesired(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, desired, t0)
	if !changed {
		t.Fatal("an empty node: no change")
	}
	if got := len(fresh.Status.Conditions); got != 4 || fresh.Status.Conditions[3].Type != v1.NodeReady {
		t.Fatalf("conditions %+v: want the 3 pressure conditions and Ready last", fresh.Status.Conditions)
	}
	if got := fresh.Status.DaemonEndpoints.KubeletEndpoint.Port; got != 10250 {
		t.Errorf("daemonEndpoints.kubeletEndpoint.port %d, want the kubelet API's 10250", got)
	}
	if fresh.Labels["team"] != "a" || fresh.Labels[v1.LabelHostname] != "n1" {
		t.Errorf("labels %v", fresh.Labels)
	}

	later := t0.Add(time.Minute)
	for _, tc := range []struct {
		name    string
		edit    func(n *v1.Node, d *desiredState)
		changed bool
	}{
		{"nothing but time", func(*v1.Node, *desiredState) {}, false},
		{"not ready", func(_ *v1.Node, d *desiredState) { d.readiness = readiness{ok: false, message: "runtime down"} }, true},
		{"shutting down", func(_ *v1.Node, d *desiredState) { d.readiness.shuttingDown = true }, true},
		{"our label removed by someone", func(n *v1.Node, _ *desiredState) { delete(n.Labels, "team") }, true},
		{"someone else's label", func(n *v1.Node, _ *desiredState) { n.Labels["admin"] = "x" }, false},
		{"someone else's extended resource", func(n *v1.Node, _ *desiredState) {
			n.Status.Capacity["example.com/dongle"] = resource.MustParse("2")
		}, false},
		{"capacity", func(_ *v1.Node, d *desiredState) {
			d.capacity = fullCapacity.DeepCopy()
			d.capacity[v1.ResourcePods] = resource.MustParse("50")
		}, true},
		{"address", func(_ *v1.Node, d *desiredState) { d.addresses = d.addresses[:1] }, true},
		{"node info", func(_ *v1.Node, d *desiredState) { d.nodeInfo.BootID = "new boot" }, true},
		{"kubelet port", func(_ *v1.Node, d *desiredState) { d.kubeletPort = 0 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have, d := fresh.DeepCopy(), desired
			tc.edit(have, &d)
			got, changed := withDesired(have, d, later)
			if changed != tc.changed {
				t.Errorf("changed %v, want %v", changed, tc.changed)
			}
			for _, c := range got.Status.Conditions {
				if !c.LastHeartbeatTime.Time.Equal(later) {
					t.Errorf("%s: heartbeat %v, want %v", c.Type, c.LastHeartbeatTime, later)
				}
			}
			if have.Labels["admin"] != "" && got.Labels["admin"] != "x" {
				t.Errorf("someone else's label dropped: %v", got.Labels)
			}
			if _, ok := have.Status.Capacity["example.com/dongle"]; ok {
				if _, ok := got.Status.Capacity["example.com/dongle"]; !ok {
					t.Errorf("someone else's resource dropped: %v", got.Status.Capacity)
				}
			}
		})
	}
}
