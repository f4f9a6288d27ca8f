package admission

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// ReasonNodeAffinity is the kubelet's reason for a pod whose nodeSelector
// or required node affinity does not match its node (the scheduler's
// NodeAffinity predicate, which the kubelet's admission runs again).
const ReasonNodeAffinity = "NodeAffinity"

// NodeAffinity rejects a pod whose nodeSelector or required node affinity
// does not match its node, as the kubelet's GeneralPredicates do: a static
// pod, or a pod bound by hand or before the node's labels changed, was
// never checked by the scheduler. node returns the node as last known, or
// with fresh as the API server has it now: as in the kubelet, a pod that
// does not match the known node is matched once more against a fresh one,
// so that a label just added does not reject the pod it was added for.
func NodeAffinity(node func(fresh bool) *v1.Node) Handler {
	return HandlerFunc(func(pod *v1.Pod, _ []*v1.Pod) Result {
		affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
		if ok, err := affinity.Match(node(false)); ok && err == nil {
			return Result{Admit: true}
		}
		if ok, err := affinity.Match(node(true)); ok && err == nil {
			return Result{Admit: true}
		}
		return Result{Reason: ReasonNodeAffinity,
			Message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"}
	})
}
