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
		var priority int32
		if pod.Spec.Priority != nil {
			priority = *pod.Spec.Priority
		}
		// The first band above the pod; the one before it is the pod's.
		i := sort.Search(len(bands), func(i int) bool { return bands[i].Priority > priority })
		if i > 0 {
			i--
		}
		groups[i].pods = append(groups[i].pods, pod)
	}
	return groups
}
