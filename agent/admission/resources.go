package admission

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// ResourceAdmitter rejects a pod when the node has its maxPods already, or
// whose requests do not fit in what the active pods leave of the node's
// allocatable resources, as the kubelet's resource predicate does.
type ResourceAdmitter struct {
	allocatable Resources
	maxPods     int
}

// NewResourceAdmitter returns an admitter for a node with allocatable
// resources (capacity minus what the system reserves) and room for maxPods
// pods.
func NewResourceAdmitter(allocatable Resources, maxPods int) *ResourceAdmitter {
	return &ResourceAdmitter{allocatable: allocatable, maxPods: maxPods}
}

// Admit checks the pod count first, then CPU, then memory, and reports only
// the first shortage, as the kubelet does. A resource the pod does not request never rejects it,
// even on an overcommitted node. An active pod with the candidate's UID is
// not counted: a pod does not compete with itself when it is admitted again.
func (a *ResourceAdmitter) Admit(pod *v1.Pod, active []*v1.Pod) Result {
	var used Resources
	pods := 0
	for _, p := range active {
		if p.UID != pod.UID {
			used.add(PodRequests(p))
			pods++
		}
	}
	req := PodRequests(pod)
	switch {
	case pods+1 > a.maxPods:
		return insufficient(ReasonOutOfPods, v1.ResourcePods, 1, int64(pods), int64(a.maxPods))
	case req.MilliCPU > 0 && req.MilliCPU > a.allocatable.MilliCPU-used.MilliCPU:
		return insufficient(ReasonOutOfCPU, v1.ResourceCPU, req.MilliCPU, used.MilliCPU, a.allocatable.MilliCPU)
	case req.Memory > 0 && req.Memory > a.allocatable.Memory-used.Memory:
		return insufficient(ReasonOutOfMemory, v1.ResourceMemory, req.Memory, used.Memory, a.allocatable.Memory)
	}
	return Result{Admit: true}
}

// insufficient words the rejection as the kubelet's InsufficientResourceError
// (CPU in millicores, memory in bytes).
func insufficient(reason string, name v1.ResourceName, requested, used, capacity int64) Result {
	return Result{Reason: reason, Message: fmt.Sprintf(
		"Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d", name, requested, used, capacity)}
}
