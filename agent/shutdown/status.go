package shutdown

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// The status the kubelet gives a pod stopped for a node shutdown.
const (
	statusReason  = "Terminated"
	statusMessage = "Pod was terminated in response to imminent node shutdown."
)

// podStatusFunc returns the status edit the kills carry (semantics §6
// step 5): phase Failed unless the pod already Succeeded, reason and message
// saying why, and a DisruptionTarget condition so that controllers and
// disruption budgets see the kubelet, not the workload, ended the pod.
//
// The Manager only hands it to the Killer. The engine applies it in the
// terminating sync, after the pod's containers stopped, so a pod is never
// reported Failed while its containers still run.
func podStatusFunc(clk clock.PassiveClock) func(*v1.PodStatus) {
	return func(s *v1.PodStatus) {
		if s.Phase != v1.PodSucceeded {
			s.Phase = v1.PodFailed
		}
		s.Reason = statusReason
		s.Message = statusMessage
		setCondition(s, v1.PodCondition{
			Type:    v1.DisruptionTarget,
			Status:  v1.ConditionTrue,
			Reason:  v1.PodReasonTerminationByKubelet,
			Message: statusMessage,
		}, metav1.NewTime(clk.Now()))
	}
}

// setCondition adds or replaces the condition of c's type. Its transition
// time is now unless the condition already had c's status, as the kubelet's
// UpdatePodCondition does: the time says when the status last changed.
func setCondition(s *v1.PodStatus, c v1.PodCondition, now metav1.Time) {
	c.LastTransitionTime = now
	for i := range s.Conditions {
		if old := &s.Conditions[i]; old.Type == c.Type {
			if old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
			*old = c
			return
		}
	}
	s.Conditions = append(s.Conditions, c)
}
