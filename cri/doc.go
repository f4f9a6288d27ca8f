// Package cri is the vocabulary that podlife's packages for a Container
// Runtime Interface (CRI) runtime share (kubelet: pkg/kubelet/container):
// the parts of the runtime and image services they call (Runtime, Images),
// the lanes the calls go through and their deadlines (Limit, Lanes: kills,
// execs, pulls and the others apart, so that none waits behind another
// and a pod's calls that hang delay only that pod), the labels and annotations
// podlife puts on sandboxes and containers, the runtime's view of one pod
// (PodRuntime) and its sandbox's IP (SandboxIP), the names of stop signals
// on both sides, and the checks and paths of a pod's spec that several of
// them need (PodDir, PathElement, IsSidecar, ContainerSpec).
//
// The jobs are its subpackages', as the kubelet's are pkg/kubelet's:
//
//	kuberuntime  runs pods: the Syncer, a worker.PodSyncer
//	podcache     the runtime's view of the pods as of its last poll
//	apistatus    a pod's API status from the runtime's view
//	envvars      a container's environment and the downward API's values
//	qos          a container's Linux resources by its pod's QoS class
//	volume       a pod's volumes on the node and their mounts
//	mount        the mounts themselves (tmpfs, bind mounts, unmounts)
//	podfiles     a pod's /etc/hosts and its termination message files
//	logs         container logs: lookup, reading, rotation
//	stats        the node's and pods' resource usage (/stats/summary, /metrics/resource)
//	lifecycle    the actions of hooks and probes (exec, httpGet, ...)
//	prober       the probes' schedule and results
//	embedded     the in-process runtime
//
// Only kuberuntime and podcache know the pod workers (package worker); no
// package but the agent imports kuberuntime.
package cri
