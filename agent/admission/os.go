package admission

import v1 "k8s.io/api/core/v1"

// The kubelet's reasons and messages for a pod meant for another OS
// (pkg/kubelet/lifecycle's predicate admit handler).
const (
	ReasonPodOSSelectorNodeLabelDoesNotMatch = "PodOSSelectorNodeLabelDoesNotMatch"
	ReasonPodOSNotSupported                  = "PodOSNotSupported"
)

// PodOS rejects a pod meant for another operating system than goos, the
// node's, with the kubelet's two checks in its order: the pod's own
// kubernetes.io/os label (the kubelet reads the pod's labels, not its
// nodeSelector, and takes the node's label to be its GOOS), then
// spec.os.name.
func PodOS(goos string) Handler {
	return HandlerFunc(func(pod *v1.Pod, _ []*v1.Pod) Result {
		if os, ok := pod.Labels[v1.LabelOSStable]; ok && os != goos {
			return Result{Reason: ReasonPodOSSelectorNodeLabelDoesNotMatch,
				Message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"}
		}
		if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != goos {
			return Result{Reason: ReasonPodOSNotSupported, Message: "Failed to admit pod as the OS field doesn't match node OS"}
		}
		return Result{Admit: true}
	})
}
