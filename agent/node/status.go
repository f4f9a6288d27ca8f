package node

import (
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// desiredState is what the Manager wants its Node to say.
type desiredState struct {
	labels      map[string]string
	capacity    v1.ResourceList
	allocatable v1.ResourceList
	addresses   []v1.NodeAddress
	nodeInfo    v1.NodeSystemInfo
	kubeletPort int32
	handlers    []v1.NodeRuntimeHandler
	readiness   readiness
}

// withDesired returns a copy of node that says d at now, and whether it
// differs from node in anything but heartbeats (the kubelet's updateNode
// and nodeStatusHasChanged). Labels, resources and conditions the Manager
// does not own are kept: an administrator may advertise extended resources
// or label the node.
func withDesired(node *v1.Node, d desiredState, now time.Time) (*v1.Node, bool) {
	updated := node.DeepCopy()
	if updated.Labels == nil {
		updated.Labels = map[string]string{}
	}
	for k, v := range d.labels {
		updated.Labels[k] = v
	}
	s := &updated.Status
	s.Capacity = withResources(s.Capacity, d.capacity)
	s.Allocatable = withResources(s.Allocatable, d.allocatable)
	s.Addresses = append([]v1.NodeAddress(nil), d.addresses...)
	s.NodeInfo = d.nodeInfo
	s.DaemonEndpoints.KubeletEndpoint.Port = d.kubeletPort
	s.RuntimeHandlers = d.handlers
	want := append(append([]v1.NodeCondition(nil), pressureConditions...), readyCondition(d.readiness, s.Capacity))
	s.Conditions = setConditions(s.Conditions, want, now)

	return updated, statusChanged(&node.Status, s) || !apiequality.Semantic.DeepEqual(node.Labels, updated.Labels)
}

// withResources returns have with the quantities of want set over it.
func withResources(have, want v1.ResourceList) v1.ResourceList {
	out := have.DeepCopy()
	if out == nil {
		out = v1.ResourceList{}
	}
	for name, q := range want {
		out[name] = q.DeepCopy()
	}
	return out
}

// statusChanged reports whether two statuses differ in anything but the
// conditions' heartbeats.
func statusChanged(a, b *v1.NodeStatus) bool {
	if conditionsChanged(a.Conditions, b.Conditions) {
		return true
	}
	ac, bc := *a, *b
	ac.Conditions, bc.Conditions = nil, nil
	return !apiequality.Semantic.DeepEqual(ac, bc)
}
