package cri

import (
	"fmt"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Helpers on a pod's spec that several of the cri packages need.

// IsSidecar reports whether init container c is a restartable init
// container: a sidecar, which runs beside the regular containers.
func IsSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// ContainerSpec is the pod's container or init container of that name, or
// nil.
func ContainerSpec(pod *v1.Pod, name string) *v1.Container {
	for _, cs := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}

// PathElement checks that value, the pod's field, is one element of a
// path, so that a path built with it stays under its root: not empty, no
// separator, not "." nor "..". Manifest validation refuses such values
// first; this holds for any value that reaches a path another way.
func PathElement(pod *v1.Pod, field, value string) error {
	if !filepath.IsLocal(value) || strings.ContainsRune(value, filepath.Separator) || value == "." {
		return fmt.Errorf("pod %s/%s: %s %q cannot be part of a file path: it must be one path element, neither \".\" nor \"..\"",
			pod.Namespace, pod.Name, field, value)
	}
	return nil
}

// The files the syncer makes for a pod live in one directory per pod under
// its pods root (kuberuntime's Options.PodsRoot), as the kubelet's do under
// /var/lib/kubelet/pods:
//
//	<PodsRoot>/<uid>/etc-hosts                      the pod's /etc/hosts (podfiles)
//	<PodsRoot>/<uid>/containers/<name>/<attempt>    a container instance's termination message (podfiles)
//	<PodsRoot>/<uid>/volumes/..., volume-subpaths/...  the pod's volumes (volume)
//
// The directory goes with the pod: removed with its sandboxes and
// containers (kuberuntime's remove), never while any of them exists.

// PodDir is the pod's directory under podsRoot. It refuses a UID that would
// lead the path elsewhere.
func PodDir(podsRoot string, pod *v1.Pod) (string, error) {
	if err := PathElement(pod, "metadata.uid", string(pod.UID)); err != nil {
		return "", err
	}
	return filepath.Join(podsRoot, string(pod.UID)), nil
}
