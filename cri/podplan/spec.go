package podplan

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

// What the plan reads of the spec besides the init containers' order.

// specChanged reports whether the container instance was created from
// another spec than c (an update of the pod changed it).
func specChanged(cur *runtimeapi.ContainerStatus, c *v1.Container) bool {
	h, ok := cur.GetAnnotations()[cri.ContainerHashAnnotation]
	return ok && h != ContainerHash(c)
}

// runsOnce reports whether the pod runs its containers at most once: its
// restartPolicy is Never and no container may restart by a policy or rule
// of its own (the kubelet's runOnce in SyncPod).
func runsOnce(pod *v1.Pod) bool {
	if pod.Spec.RestartPolicy != v1.RestartPolicyNever {
		return false
	}
	for i := range pod.Spec.Containers {
		if cri.ContainerRestartable(&pod.Spec, &pod.Spec.Containers[i]) {
			return false
		}
	}
	return true
}

// ContainerHash identifies the container's spec, resources aside (the
// kubelet resizes those in place rather than restart for them).
func ContainerHash(c *v1.Container) string {
	spec := *c
	spec.Resources = v1.ResourceRequirements{}
	data, err := json.Marshal(&spec)
	if err != nil {
		panic(fmt.Sprintf("a v1.Container always marshals: %v", err))
	}
	h := fnv.New64a()
	h.Write(data)
	return strconv.FormatUint(h.Sum64(), 16)
}
