package prober

import (
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Apply sets the started and ready fields of pod's running containers
// (and sidecars) in st from the recorded results, and the pod's
// ContainersReady and Ready conditions after them: a container is started
// once its startup probe succeeded (at once without one), and ready once
// started and its readiness probe succeeded (at once without one). Both
// the status generation and the status manager apply it, so that the
// results are their one source.
func (m *Manager) Apply(pod *v1.Pod, st *v1.PodStatus) {
	if m == nil {
		return
	}
	for i := range st.ContainerStatuses {
		m.applyContainer(specByName(pod.Spec.Containers, st.ContainerStatuses[i].Name), &st.ContainerStatuses[i])
	}
	for i := range st.InitContainerStatuses {
		c := specByName(pod.Spec.InitContainers, st.InitContainerStatuses[i].Name)
		if c != nil && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			m.applyContainer(c, &st.InitContainerStatuses[i])
		}
	}
	ready := conditionStatus(PodReady(pod, st))
	for i := range st.Conditions {
		if t := st.Conditions[i].Type; t == v1.ContainersReady || t == v1.PodReady {
			st.Conditions[i].Status = ready
		}
	}
}

func (m *Manager) applyContainer(c *v1.Container, cs *v1.ContainerStatus) {
	if c == nil || cs.State.Running == nil || cs.ContainerID == "" {
		return
	}
	id := cs.ContainerID
	if i := strings.Index(id, "://"); i >= 0 {
		id = id[i+3:]
	}
	started := c.StartupProbe == nil || m.is(Startup, id, Success)
	cs.Started = &started
	cs.Ready = started && (c.ReadinessProbe == nil || m.is(Readiness, id, Success))
}

func (m *Manager) is(k Kind, id string, want Result) bool {
	r, ok := m.results.Get(k, id)
	return ok && r == want
}

// PodReady reports whether the pod is ready: running, with each regular
// container and each sidecar ready (the kubelet's ContainersReady).
func PodReady(pod *v1.Pod, st *v1.PodStatus) bool {
	ready := st.Phase == v1.PodRunning
	for _, cs := range st.ContainerStatuses {
		ready = ready && cs.Ready
	}
	for i, c := range pod.Spec.InitContainers {
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		ready = ready && (!sidecar || (i < len(st.InitContainerStatuses) && st.InitContainerStatuses[i].Ready))
	}
	return ready
}

func specByName(cs []v1.Container, name string) *v1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func conditionStatus(b bool) v1.ConditionStatus {
	if b {
		return v1.ConditionTrue
	}
	return v1.ConditionFalse
}
