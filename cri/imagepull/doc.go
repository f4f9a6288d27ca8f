// Package imagepull holds what the syncer keeps about image pulls between
// syncs: the per-pod, per-image pull back-off. It is the counterpart of
// the back-off in the kubelet's pkg/kubelet/images (the image manager's
// ImagePullBackOff).
package imagepull
