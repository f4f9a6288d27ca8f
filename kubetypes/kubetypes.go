// Package kubetypes is a pod's identity on a node: its full name, the
// config source it came from, and whether it is static or a mirror; and the
// Change a config source reports. It is a leaf: the engine, the runtime
// side and the agent's packages all name pods through it, so none of them
// imports another only for a name or a type.
//
// Kubelet counterpart: pkg/kubelet/types (the config annotations,
// IsStaticPod, PodUpdate), kubecontainer.GetPodFullName and
// pkg/kubelet/pod's IsMirrorPod.
package kubetypes

import v1 "k8s.io/api/core/v1"

// The annotations the kubelet's config sources put on a pod.
const (
	// ConfigSourceAnnotation names the source a pod came from: SourceFile,
	// SourceAPI, or another non-API source.
	ConfigSourceAnnotation = "kubernetes.io/config.source"
	// ConfigHashAnnotation holds a static pod's UID: for a pod without one
	// in its manifest, the hash of the manifest.
	ConfigHashAnnotation = "kubernetes.io/config.hash"
	// ConfigSeenAnnotation is when the pod was first reported (RFC 3339).
	ConfigSeenAnnotation = "kubernetes.io/config.seen"
)

// Values of ConfigSourceAnnotation.
const (
	// SourceFile is the source of a pod from a manifest file.
	SourceFile = "file"
	// SourceAPI is the source of a pod from the API server, as the kubelet
	// sets it in memory (it is never written to the API).
	SourceAPI = "api"
)

// IsStatic reports whether the pod comes from a source other than the API
// server: it has a ConfigSourceAnnotation that is not SourceAPI.
func IsStatic(pod *v1.Pod) bool {
	src, ok := pod.Annotations[ConfigSourceAnnotation]
	return ok && src != SourceAPI
}

// IsMirror reports whether pod is a mirror pod: the API server's copy of a
// static pod, marked with the kubernetes.io/config.mirror annotation.
func IsMirror(pod *v1.Pod) bool {
	_, ok := pod.Annotations[v1.MirrorPodAnnotationKey]
	return ok
}

// FullName is the kubelet's name for a pod, name_namespace: static pods
// with one full name run one after the other.
func FullName(name, namespace string) string { return name + "_" + namespace }
