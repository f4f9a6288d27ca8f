// Package admission decides locally whether a node agent may start a pod,
// as the kubelet's admit handlers do before a pod reaches the pod workers
// (semantics 3.7): a pod rejected here must never be handed to UpdatePod.
// Its handlers are the kubelet's resource fit (OutOfcpu, OutOfmemory), OS
// checks (PodOSNotSupported, PodOSSelectorNodeLabelDoesNotMatch), sysctl,
// supplementalGroupsPolicy and AppArmor checks, podlife's refusal of
// the pod fields it does not apply (podfields, UnsupportedPodField), and
// of the volume file paths the API server refuses (VolumePaths, for static
// pods, which never went through it).
//
// It is pure logic: callers supply the candidate pod and the pods that
// still hold node resources (see ActivePods) and get a Result back.
package admission
