package admission

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestResourceAdmitter(t *testing.T) {
	node := Resources{MilliCPU: 2000, Memory: 1024 * mi}
	withInit := podOf("init", ctr("100m", "1Mi"))
	withInit.Spec.InitContainers = []v1.Container{ctr("1500m", "1Mi")}
	tests := []struct {
		name   string
		pod    *v1.Pod
		active []*v1.Pod
		want   Result
	}{
		{name: "empty node", pod: podOf("new", ctr("1", "512Mi")), want: Result{Admit: true}},
		{
			name:   "fits exactly",
			pod:    podOf("new", ctr("1", "512Mi")),
			active: []*v1.Pod{podOf("a", ctr("1", "512Mi"))},
			want:   Result{Admit: true},
		},
		{
			name:   "cpu short",
			pod:    podOf("new", ctr("1500m", "1Mi")),
			active: []*v1.Pod{podOf("a", ctr("1", "1Mi"))},
			want: Result{Reason: "OutOfcpu",
				Message: "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000"},
		},
		{
			name:   "memory short",
			pod:    podOf("new", ctr("1m", "600Mi")),
			active: []*v1.Pod{podOf("a", ctr("", "500Mi"))},
			want: Result{Reason: "OutOfmemory",
				Message: "Node didn't have enough resource: memory, requested: 629145600, used: 524288000, capacity: 1073741824"},
		},
		{
			name:   "both short: cpu is reported",
			pod:    podOf("new", ctr("3", "2Gi")),
			active: nil,
			want: Result{Reason: "OutOfcpu",
				Message: "Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000"},
		},
		{
			name:   "limits only count against the node",
			pod:    podOf("new", limitsOnly("", "1Gi")),
			active: []*v1.Pod{podOf("a", ctr("", "1Mi"))},
			want: Result{Reason: "OutOfmemory",
				Message: "Node didn't have enough resource: memory, requested: 1073741824, used: 1048576, capacity: 1073741824"},
		},
		{
			name:   "active pods use the init formula",
			pod:    podOf("new", ctr("600m", "")),
			active: []*v1.Pod{withInit},
			want: Result{Reason: "OutOfcpu",
				Message: "Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000"},
		},
		{
			name:   "no requests fit a full node",
			pod:    podOf("new", v1.Container{}),
			active: []*v1.Pod{podOf("a", ctr("2", "1Gi"))},
			want:   Result{Admit: true},
		},
		{
			name:   "an unrequested resource does not reject on an overcommitted node",
			pod:    podOf("new", ctr("", "1Mi")),
			active: []*v1.Pod{podOf("a", ctr("3", ""))},
			want:   Result{Admit: true},
		},
		{
			name:   "the node has its maxPods",
			pod:    podOf("new", v1.Container{}),
			active: []*v1.Pod{podOf("a", v1.Container{}), podOf("b", v1.Container{}), podOf("c", v1.Container{})},
			want: Result{Reason: "OutOfpods",
				Message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"},
		},
		{
			name:   "the count goes first",
			pod:    podOf("new", ctr("3", "")),
			active: []*v1.Pod{podOf("a", v1.Container{}), podOf("b", v1.Container{}), podOf("c", v1.Container{})},
			want: Result{Reason: "OutOfpods",
				Message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"},
		},
		{
			name:   "the candidate's own UID in active is not counted",
			pod:    podOf("same", ctr("2", "1Gi")),
			active: []*v1.Pod{podOf("same", ctr("2", "1Gi"))},
			want:   Result{Admit: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewResourceAdmitter(node, 3).Admit(tt.pod, tt.active); got != tt.want {
				t.Errorf("Admit = %+v\nwant    %+v", got, tt.want)
			}
		})
	}
}
