// Package cri is the vocabulary that podlife's packages for a Container
// Runtime Interface (CRI) runtime share (kubelet: pkg/kubelet/container):
// the parts of the runtime and image services they call (Runtime, Images),
// the limit on the calls in flight (Limit), the labels and annotations
// podlife puts on sandboxes and containers, and the runtime's view of one
// pod (PodRuntime).
//
// The jobs are its subpackages': kuberuntime runs pods (the Syncer, a
// worker.PodSyncer); prober runs the containers' probes; mount makes the
// volumes' mounts; embedded is the in-process runtime.
package cri
