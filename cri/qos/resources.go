// Package qos makes a container's Linux resources as the kubelet does
// (kubelet: pkg/kubelet/qos, and kuberuntime_container_linux.go's
// generateLinuxContainerResources): CPU shares and a CFS quota from its CPU
// request and limit, its memory limit, and the oom_score_adj of its pod's
// QoS class.
package qos

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

// The kubelet's cgroup constants (pkg/kubelet/cm, kuberuntime).
const (
	minShares     = 2
	maxShares     = 262144
	sharesPerCPU  = 1024
	quotaPeriod   = 100000 // µs: 100 ms
	minQuota      = 1000   // µs
	milliCPUToCPU = 1000

	guaranteedOOMScoreAdj = -997
	besteffortOOMScoreAdj = 1000
)

// ContainerResources are the container's Linux resources as the kubelet's
// generateLinuxContainerResources makes them (cgroup v1 terms, which the
// runtime converts): CPU shares from the CPU request, or from the limit
// when there is no request; a CFS quota from the limit over a 100 ms
// period (no quota without a limit); the memory limit; and oom_score_adj
// by the pod's QoS class. machineMemory weighs a burstable container's
// memory request.
func ContainerResources(pod *v1.Pod, c *v1.Container, machineMemory int64) *runtimeapi.LinuxContainerResources {
	limits, requests := c.Resources.Limits, c.Resources.Requests
	cpuLimit := limits[v1.ResourceCPU]
	shareCPU := requests[v1.ResourceCPU]
	if _, ok := requests[v1.ResourceCPU]; !ok && !cpuLimit.IsZero() {
		shareCPU = cpuLimit
	}
	mem := limits[v1.ResourceMemory]
	return &runtimeapi.LinuxContainerResources{
		CpuShares:          milliCPUToShares(shareCPU.MilliValue()),
		CpuPeriod:          quotaPeriod,
		CpuQuota:           milliCPUToQuota(cpuLimit.MilliValue()),
		MemoryLimitInBytes: mem.Value(),
		OomScoreAdj:        oomScoreAdj(pod, c, machineMemory),
	}
}

// milliCPUToShares is the kubelet's MilliCPUToShares.
func milliCPUToShares(milliCPU int64) int64 {
	if milliCPU == 0 {
		return minShares
	}
	return min(max(milliCPU*sharesPerCPU/milliCPUToCPU, minShares), maxShares)
}

// milliCPUToQuota is the kubelet's milliCPUToQuota: 0, no quota, without
// a limit.
func milliCPUToQuota(milliCPU int64) int64 {
	if milliCPU == 0 {
		return 0
	}
	return max(milliCPU*quotaPeriod/milliCPUToCPU, minQuota)
}

// oomScoreAdj is the kubelet's GetContainerOOMScoreAdjust: guaranteed pods
// (and node-critical ones) are killed last, best-effort ones first, and a
// burstable container the less likely the more memory it requests of the
// machine's, between 3 and 999; a sidecar no more likely than the regular
// container requesting the least. Without the machine's memory a
// burstable container gets 999.
func oomScoreAdj(pod *v1.Pod, c *v1.Container, machineMemory int64) int64 {
	if pod.Spec.PriorityClassName == "system-node-critical" {
		return guaranteedOOMScoreAdj
	}
	switch podQOS(pod) {
	case v1.PodQOSGuaranteed:
		return guaranteedOOMScoreAdj
	case v1.PodQOSBestEffort:
		return besteffortOOMScoreAdj
	}
	if machineMemory <= 0 {
		return besteffortOOMScoreAdj - 1
	}
	request := c.Resources.Requests[v1.ResourceMemory]
	adj := 1000 - 1000*request.Value()/machineMemory
	if cri.IsSidecar(c) {
		if least := leastRegularMemoryRequest(pod); least > 0 {
			adj = min(adj, 1000-1000*least/machineMemory)
		}
	}
	if adj < 1000+guaranteedOOMScoreAdj {
		return 1000 + guaranteedOOMScoreAdj
	}
	if adj == besteffortOOMScoreAdj {
		return adj - 1
	}
	return adj
}

// leastRegularMemoryRequest is the smallest memory request of the pod's
// regular containers, 0 when none requests memory.
func leastRegularMemoryRequest(pod *v1.Pod) int64 {
	var least int64
	for i := range pod.Spec.Containers {
		q := pod.Spec.Containers[i].Resources.Requests[v1.ResourceMemory]
		if v := q.Value(); v > 0 && (least == 0 || v < least) {
			least = v
		}
	}
	return least
}

// podQOS is the pod's QoS class by the API's rules (GetPodQOS), from its
// containers' CPU and memory (pod-level resources are not supported):
// BestEffort without any request or limit, Guaranteed when every container
// limits both and requests what it limits, Burstable otherwise.
func podQOS(pod *v1.Pod) v1.PodQOSClass {
	requests, limits := v1.ResourceList{}, v1.ResourceList{}
	guaranteed := true
	all := append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			if q, ok := c.Resources.Requests[name]; ok && q.Sign() > 0 {
				add(requests, name, q)
			}
			if q, ok := c.Resources.Limits[name]; ok && q.Sign() > 0 {
				add(limits, name, q)
			} else {
				guaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return v1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return v1.PodQOSGuaranteed
	}
	return v1.PodQOSBurstable
}

func add(list v1.ResourceList, name v1.ResourceName, q resource.Quantity) {
	sum := list[name]
	sum.Add(q)
	list[name] = sum
}
