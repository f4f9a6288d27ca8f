package shutdown

import (
	"sort"

	v1 "k8s.io/api/core/v1"
)

// group is a band with the pods it stops.
type group struct {
	Band
	pods []*v1.Pod
}

// groupByPriority puts each pod, in order, into the band with the highest
// priority not above the pod's (no priority counts as 0). Pods below the
// lowest band join the lowest, so that every pod is stopped; pods above the
// highest join the highest. bands must be sorted and non-empty.
func groupByPriority(bands []Band, pods []*v1.Pod) []group {
	groups := make([]group, len(bands))
	for i, b := range bands {
		groups[i].Band = b
	}
	for _, pod := range pods {
		priority := podPriority(pod)
		// The first band above the pod; the one before it is the pod's.
		i := sort.Search(len(bands), func(i int) bool { return bands[i].Priority > priority })
		if i > 0 {
			i--
		}
		groups[i].pods = append(groups[i].pods, pod)
	}
	return groups
}

// systemPriorityClasses are the priority classes every cluster has, with
// their values (SystemPriorityClasses in the kubelet's
// pkg/apis/scheduling; k8s.io/api does not export them).
var systemPriorityClasses = map[string]int32{
	"system-cluster-critical": CriticalPriority,
	"system-node-critical":    CriticalPriority + 1000,
}

// podPriority is the pod's priority: its own, else that of its system
// priority class, as the API server's priority admission would have set
// it (a static pod never passes through it), else 0.
func podPriority(pod *v1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return systemPriorityClasses[pod.Spec.PriorityClassName]
}
