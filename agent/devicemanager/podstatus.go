package devicemanager

import (
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// SetAllocatedResourcesStatus sets, in each container status of pod's
// status, the health of the devices allocated to the container
// (allocatedResourcesStatus, the kubelet's UpdateAllocatedResourcesStatus
// behind its ResourceHealthStatus feature): a device is as its plugin
// last listed it, Healthy if it no longer lists it. Resources and devices
// are in name order. A container without devices is left as it is.
func (m *Manager) SetAllocatedResourcesStatus(pod *v1.Pod, status *v1.PodStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range status.ContainerStatuses {
		cs := &status.ContainerStatuses[i]
		byResource := m.state.allocated[containerKey{pod.UID, cs.Name}]
		for _, name := range slices.Sorted(maps.Keys(byResource)) {
			rs := v1.ResourceStatus{Name: v1.ResourceName(name), Resources: []v1.ResourceHealth{}}
			for _, id := range byResource[name] {
				health := v1.ResourceHealthStatusHealthy
				if r := m.state.resources[name]; r != nil {
					if d, ok := r.devices[id]; ok && d.Health != pluginapi.Healthy {
						health = v1.ResourceHealthStatusUnhealthy
					}
				}
				rs.Resources = append(rs.Resources, v1.ResourceHealth{ResourceID: v1.ResourceID(id), Health: health})
			}
			j := slices.IndexFunc(cs.AllocatedResourcesStatus, func(s v1.ResourceStatus) bool { return s.Name == rs.Name })
			if j < 0 {
				cs.AllocatedResourcesStatus = append(cs.AllocatedResourcesStatus, rs)
			} else {
				cs.AllocatedResourcesStatus[j] = rs
			}
		}
	}
}
