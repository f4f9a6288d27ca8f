package volume

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

// Mounts are the runtime's mounts of container c's volumeMounts, in
// their order, given the pod's volumes set up by SetUp: read-only
// when the mount or the volume says so, with the propagation it asks
// (private unless HostToContainer or Bidirectional), recursively
// read-only as ResolveRecursiveReadOnly says on a runtime that supports
// it or not (supportsRRO), and a
// subPath through its own bind mount under the pod's directory
// (subPathMount).
func Mounts(podsRoot string, pod *v1.Pod, c *v1.Container, vols map[string]Volume, supportsRRO bool) ([]*runtimeapi.Mount, error) {
	var mounts []*runtimeapi.Mount
	for i, m := range c.VolumeMounts {
		rro, err := ResolveRecursiveReadOnly(m, supportsRRO)
		if err != nil {
			return nil, fmt.Errorf("failed to resolve recursive read-only mode: %w", err)
		}
		vol, ok := vols[m.Name]
		if !ok {
			return nil, fmt.Errorf("pod %s/%s: container %q: volumeMount %q: the pod has no volume %q", pod.Namespace, pod.Name, c.Name, m.Name, m.Name)
		}
		host := vol.hostPath
		if m.SubPath != "" {
			target, err := subPathTarget(podsRoot, pod, m.Name, c.Name, i)
			if err != nil {
				return nil, err
			}
			if host, err = subPathMount(vol.hostPath, m.SubPath, target); err != nil {
				return nil, fmt.Errorf("pod %s/%s: container %q: volumeMount %q: %w", pod.Namespace, pod.Name, c.Name, m.Name, err)
			}
		}
		mounts = append(mounts, &runtimeapi.Mount{
			ContainerPath: m.MountPath,
			HostPath:      host,
			Readonly:      m.ReadOnly || vol.readOnly,
			Propagation:   propagation(m.MountPropagation),
			// The kubelet asks for it only with a read-only mount
			// (ResolveRecursiveReadOnly refused the others).
			RecursiveReadOnly: rro,
		})
	}
	return mounts, nil
}

// subPathTarget is where the index-th volumeMount of container c, of
// volume, has its subPath bind-mounted (the kubelet's layout).
func subPathTarget(podsRoot string, pod *v1.Pod, volume, container string, index int) (string, error) {
	dir, err := cri.PodDir(podsRoot, pod)
	if err != nil {
		return "", err
	}
	if err := cri.PathElement(pod, "container name", container); err != nil {
		return "", err
	}
	return filepath.Join(dir, "volume-subpaths", volume, container, strconv.Itoa(index)), nil
}

// MountsAt reports whether container c has a volume mounted at path: the
// kubelet mounts none of its own files (/etc/hosts) there.
func MountsAt(c *v1.Container, path string) bool {
	return slices.ContainsFunc(c.VolumeMounts, func(m v1.VolumeMount) bool { return filepath.Clean(m.MountPath) == path })
}
