package admission

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resources is an amount of the two resources the agent accounts for.
type Resources struct {
	MilliCPU int64
	Memory   int64 // bytes
}

func (r *Resources) add(o Resources) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
}

// max raises each resource of r to o's where o's is larger: resources are
// compared one by one, as the scheduler does, not as a vector.
func (r *Resources) max(o Resources) {
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
}

// PodRequests is what the pod reserves on the node, by the scheduler's and
// kubelet's formula (component-helpers PodRequests):
//
//   - regular containers run together, so their requests add up, and so do
//     restartable init containers (sidecars), which keep running beside them;
//   - a regular init container runs alone, beside only the sidecars declared
//     before it, so the pod needs the largest of those moments;
//   - the pod needs the larger of both phases, per resource;
//   - pod-level requests (spec.resources), where set, replace the container
//     aggregate for that resource;
//   - the runtime's overhead (spec.overhead) comes on top.
//
// A request that is missing where a limit is set counts as the limit, as API
// defaulting would have made it: static pods from files may skip defaulting.
func PodRequests(pod *v1.Pod) Resources {
	var regular, sidecars, initPeak Resources
	for i := range pod.Spec.Containers {
		regular.add(containerRequests(&pod.Spec.Containers[i].Resources))
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		req := containerRequests(&c.Resources)
		if isSidecar(c) {
			// Sidecars keep running beside everything that starts after
			// them; regular already holds them all, so they alone never
			// raise the init peak.
			regular.add(req)
			sidecars.add(req)
			continue
		}
		req.add(sidecars)
		initPeak.max(req)
	}
	regular.max(initPeak)
	applyPodLevel(&regular, pod)
	regular.add(resources(pod.Spec.Overhead))
	return regular
}

func isSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// containerRequests are a container's requests, each defaulting to its limit.
func containerRequests(r *v1.ResourceRequirements) Resources {
	return requestsOrLimits(r.Requests, r.Limits)
}

func requestsOrLimits(requests, limits v1.ResourceList) Resources {
	cpu, ok := requests[v1.ResourceCPU]
	if !ok {
		cpu = limits[v1.ResourceCPU]
	}
	mem, ok := requests[v1.ResourceMemory]
	if !ok {
		mem = limits[v1.ResourceMemory]
	}
	return Resources{MilliCPU: cpu.MilliValue(), Memory: mem.Value()}
}

func resources(l v1.ResourceList) Resources {
	return requestsOrLimits(l, nil)
}

// applyPodLevel lets pod-level requests replace the container aggregate.
// A pod-level limit without a request stands for the request only when no
// container asks for that resource: API defaulting otherwise sets the
// pod-level request to the container aggregate, which r already is.
func applyPodLevel(r *Resources, pod *v1.Pod) {
	pl := pod.Spec.Resources
	if pl == nil {
		return
	}
	pick := func(name v1.ResourceName, v *int64, value func(q *resource.Quantity) int64) {
		if q, ok := pl.Requests[name]; ok {
			*v = value(&q)
		} else if q, ok := pl.Limits[name]; ok && !anyContainerAsks(pod, name) {
			*v = value(&q)
		}
	}
	pick(v1.ResourceCPU, &r.MilliCPU, (*resource.Quantity).MilliValue)
	pick(v1.ResourceMemory, &r.Memory, (*resource.Quantity).Value)
}

// anyContainerAsks reports whether a container, init container or sidecar
// requests (or, by defaulting, limits) the resource.
func anyContainerAsks(pod *v1.Pod, name v1.ResourceName) bool {
	asks := func(cs []v1.Container) bool {
		for i := range cs {
			_, req := cs[i].Resources.Requests[name]
			_, lim := cs[i].Resources.Limits[name]
			if req || lim {
				return true
			}
		}
		return false
	}
	return asks(pod.Spec.Containers) || asks(pod.Spec.InitContainers)
}
