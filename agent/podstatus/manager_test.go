package podstatus

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"
)

func localPod(uid types.UID, annotations map[string]string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: string(uid), UID: uid, Annotations: annotations}}
}

// TestLocalStore: without a Client the Manager is the agent's status store.
func TestLocalStore(t *testing.T) {
	clk := clocktesting.NewFakeClock(now.Time)
	m, err := New(Config{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	m.Run(context.Background()) // returns at once: nothing to write to

	a, b := localPod("a", nil), localPod("b", map[string]string{"kubernetes.io/config.source": "file"})
	if got := m.Phase(a); got != v1.PodPending {
		t.Errorf("phase of an unknown pod %q, want Pending", got)
	}
	if _, ok := m.Get("a"); ok {
		t.Error("Get found a status never recorded")
	}
	m.SetPodStatus(a, v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}})
	m.SetPodStatus(b, v1.PodStatus{Phase: v1.PodFailed, Reason: "OutOfmemory"})
	m.PodChanged(a) // no API writer: nothing to do, nothing breaks

	st, ok := m.Get("a")
	if !ok || st.Phase != v1.PodRunning || m.Phase(a) != v1.PodRunning {
		t.Fatalf("a: %+v %v, want Running", st, ok)
	}
	if at := st.Conditions[0].LastTransitionTime; !at.Equal(&now) {
		t.Errorf("lastTransitionTime %v, want the time it was recorded, %v", at, now)
	}
	if st.StartTime == nil || !st.StartTime.Equal(&now) {
		t.Errorf("startTime %v, want the time the pod was first recorded", st.StartTime)
	}

	// A later status with Ready unchanged keeps the transition time.
	clk.Step(time.Minute)
	m.SetPodStatus(a, v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}, Reason: "again"})
	if st, _ := m.Get("a"); !st.Conditions[0].LastTransitionTime.Equal(&now) || st.Reason != "again" {
		t.Errorf("after an update: %+v, want Ready's transition time kept at %v", st, now)
	}

	// Get returns a copy.
	st.Conditions[0].Status = v1.ConditionFalse
	if again, _ := m.Get("a"); again.Conditions[0].Status != v1.ConditionTrue {
		t.Error("Get exposed the recorded status to changes")
	}

	m.Retain(func(uid types.UID) bool { return uid == "b" })
	if _, ok := m.Get("a"); ok {
		t.Error("Retain kept a")
	}
	if m.Phase(b) != v1.PodFailed {
		t.Errorf("Retain dropped b")
	}
}

func TestNewNeedsEngineAndPodsWithClient(t *testing.T) {
	if _, err := New(Config{Client: &kubernetes.Clientset{}}); err == nil {
		t.Fatal("New accepted a Client without Engine and APIPods")
	}
}

// TestHostIPs: every status recorded carries the node's IPs as hostIP and
// hostIPs (the upstream conformance spec "Pods should get a host IP").
func TestHostIPs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hostIPs []string
		wantIP  string
		wantIPs []v1.HostIP
	}{
		{"dual stack", []string{"192.0.2.2", "2001:db8::2"}, "192.0.2.2", []v1.HostIP{{IP: "192.0.2.2"}, {IP: "2001:db8::2"}}},
		{"none configured: left unset", nil, "", nil},
	} {
		m, err := New(Config{HostIPs: tc.hostIPs})
		if err != nil {
			t.Fatal(err)
		}
		m.SetPodStatus(localPod("a", nil), v1.PodStatus{Phase: v1.PodPending})
		st, _ := m.Get("a")
		if st.HostIP != tc.wantIP || !slices.Equal(st.HostIPs, tc.wantIPs) {
			t.Errorf("%s: hostIP %q hostIPs %v; want %q %v", tc.name, st.HostIP, st.HostIPs, tc.wantIP, tc.wantIPs)
		}
	}
}
