package volume

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// ResolveRecursiveReadOnly is whether mount m is made recursively
// read-only, on a runtime that supports it (supportsRRO) or not, as the
// kubelet's resolveRecursiveReadOnly: Disabled or unset never, IfPossible
// when the runtime can, Enabled or an error when it cannot. The errors are
// the kubelet's (the e2e suite matches them).
func ResolveRecursiveReadOnly(m v1.VolumeMount, supportsRRO bool) (bool, error) {
	if m.RecursiveReadOnly == nil || *m.RecursiveReadOnly == v1.RecursiveReadOnlyDisabled {
		return false, nil
	}
	if !m.ReadOnly {
		return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not read-only", m.Name)
	}
	if m.MountPropagation != nil && *m.MountPropagation != v1.MountPropagationNone {
		return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not compatible with propagation %q", m.Name, *m.MountPropagation)
	}
	switch mode := *m.RecursiveReadOnly; mode {
	case v1.RecursiveReadOnlyIfPossible:
		return supportsRRO, nil
	case v1.RecursiveReadOnlyEnabled:
		if !supportsRRO {
			return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not supported by the runtime", m.Name)
		}
		return true, nil
	default:
		return false, fmt.Errorf("unknown recursive read-only mode %q", mode)
	}
}

// checkRecursiveReadOnly refuses what the API server's validation of a
// volumeMount's recursiveReadOnly refuses (a static pod is checked here).
func checkRecursiveReadOnly(m *v1.VolumeMount) error {
	if m.RecursiveReadOnly == nil {
		return nil
	}
	switch *m.RecursiveReadOnly {
	case v1.RecursiveReadOnlyDisabled:
		return nil
	case v1.RecursiveReadOnlyEnabled, v1.RecursiveReadOnlyIfPossible:
		if !m.ReadOnly {
			return fmt.Errorf("recursiveReadOnly: Forbidden: may only be specified when readOnly is true")
		}
		if m.MountPropagation != nil && *m.MountPropagation != v1.MountPropagationNone {
			return fmt.Errorf("recursiveReadOnly: Forbidden: may only be specified when mountPropagation is None or not specified")
		}
		return nil
	}
	return fmt.Errorf("recursiveReadOnly: Unsupported value: %q: supported values: %q, %q, %q", *m.RecursiveReadOnly,
		v1.RecursiveReadOnlyDisabled, v1.RecursiveReadOnlyEnabled, v1.RecursiveReadOnlyIfPossible)
}

// MountStatuses are container c's volumeMounts as its status reports them
// (the kubelet's convertToAPIContainerStatuses): each read-only one with
// the recursive read-only mode it gets, Disabled or Enabled.
func MountStatuses(c *v1.Container, supportsRRO bool) []v1.VolumeMountStatus {
	var out []v1.VolumeMountStatus
	for _, m := range c.VolumeMounts {
		st := v1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if m.ReadOnly {
			mode := v1.RecursiveReadOnlyDisabled
			if rro, err := ResolveRecursiveReadOnly(m, supportsRRO); err == nil && rro {
				mode = v1.RecursiveReadOnlyEnabled
			}
			st.RecursiveReadOnly = &mode
		}
		out = append(out, st)
	}
	return out
}
