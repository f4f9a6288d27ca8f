package podstatus

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// stampTimes sets the times the syncer leaves to the status manager, by
// comparing st with prev, the pod's previous status (recorded, or else the
// API's): a condition's lastTransitionTime is prev's when its status did not
// change, else the time it carries, else now; the start time is prev's, else
// st's own (the sandbox's creation), else now: when the agent first
// acknowledged the pod.
func stampTimes(prev, st *v1.PodStatus, now metav1.Time) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if old, ok := findCondition(prev.Conditions, c.Type); ok && old.Status == c.Status && !old.LastTransitionTime.IsZero() {
			c.LastTransitionTime = old.LastTransitionTime
		} else if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = now
		}
	}
	switch {
	case prev.StartTime != nil && !prev.StartTime.IsZero():
		t := *prev.StartTime
		st.StartTime = &t
	case st.StartTime == nil || st.StartTime.IsZero():
		t := now
		st.StartTime = &t
	}
}

// normalizeTimes truncates st's times to seconds, as the API stores them, so
// that a status read back compares equal to the one written.
func normalizeTimes(st *v1.PodStatus) {
	round := func(t *metav1.Time) { *t = t.Rfc3339Copy() }
	if st.StartTime != nil {
		round(st.StartTime)
	}
	for i := range st.Conditions {
		round(&st.Conditions[i].LastProbeTime)
		round(&st.Conditions[i].LastTransitionTime)
	}
	for _, list := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range list {
			for _, s := range []*v1.ContainerState{&list[i].State, &list[i].LastTerminationState} {
				if s.Running != nil {
					round(&s.Running.StartedAt)
				}
				if s.Terminated != nil {
					round(&s.Terminated.StartedAt)
					round(&s.Terminated.FinishedAt)
				}
			}
		}
	}
}
