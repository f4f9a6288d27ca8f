package cri

// Labels the kubelet puts on every sandbox and container it creates. podlife
// uses the same keys, so the pods of a previous run (or of a kubelet) are
// recognised as the pods they are, and orphans can be found by them.
const (
	PodNameLabel       = "io.kubernetes.pod.name"
	PodNamespaceLabel  = "io.kubernetes.pod.namespace"
	PodUIDLabel        = "io.kubernetes.pod.uid"
	ContainerNameLabel = "io.kubernetes.container.name"
)

// Annotations podlife puts on containers, for status and restarts.
const (
	// RestartCountAnnotation is the number of earlier instances of the
	// container in its sandbox; CRI metadata's Attempt carries the same.
	RestartCountAnnotation = "io.kubernetes.container.restartCount"
	// ContainerHashAnnotation is a hash of the container's spec: a running
	// container whose spec changed is replaced.
	ContainerHashAnnotation = "io.kubernetes.container.hash"
	// GracePeriodAnnotation is the pod's terminationGracePeriodSeconds when
	// the container was created; an orphan is stopped within it.
	GracePeriodAnnotation = "io.kubernetes.pod.terminationGracePeriod"
)
