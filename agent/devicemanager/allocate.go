package devicemanager

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// ReasonUnexpectedAdmissionError is the kubelet's reason for a pod whose
// devices could not be allocated at admission.
const ReasonUnexpectedAdmissionError = "UnexpectedAdmissionError"

// AdmissionError is why a pod's devices could not be allocated; its text
// is the kubelet's ("Allocate failed due to ..., which is unexpected").
type AdmissionError struct{ Err error }

func (e *AdmissionError) Error() string {
	return fmt.Sprintf("Allocate failed due to %v, which is unexpected", e.Err)
}

func (e *AdmissionError) Unwrap() error { return e.Err }

// podAllocation is the devices each container of a pod gets: container
// name -> resource -> device IDs (sorted).
type podAllocation map[string]map[string][]string

// devicePool is what an allocation picks from: the resources of device
// plugins, each with its healthy devices that no other pod holds.
type devicePool interface {
	isDeviceResource(name string) bool
	// healthyFree are the resource's healthy devices not in use (sorted),
	// and how many healthy devices it has in all; ok false when no
	// plugin registered it.
	healthyFree(name string) (free []string, healthy int, ok bool)
}

// planPod decides which devices every container of pod gets, in the
// order the containers run: a non-restartable init container's devices
// are free again for the containers after it (the kubelet's
// devicesToReuse), a sidecar's and a regular container's are held for the
// pod's life. Errors are the kubelet's devicesToAllocate's.
func planPod(pod *v1.Pod, pool devicePool) (podAllocation, error) {
	plan := podAllocation{}
	taken := map[string][]string{}    // resource -> devices held by the pod
	reusable := map[string][]string{} // resource -> devices of finished init containers
	inits := len(pod.Spec.InitContainers)
	for i, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		got, err := planContainer(&c, pool, taken, reusable)
		if err != nil {
			return nil, err
		}
		if len(got) > 0 {
			plan[c.Name] = got
		}
		// Only an init container that is not a sidecar is done before the
		// next container starts.
		done := i < inits && (c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways)
		for name, ids := range got {
			if done {
				reusable[name] = union(reusable[name], ids)
			} else {
				reusable[name] = without(reusable[name], ids)
			}
		}
	}
	return plan, nil
}

// planContainer picks c's devices: first from reusable, then from the
// pool's free devices that the pod has not taken yet.
func planContainer(c *v1.Container, pool devicePool, taken, reusable map[string][]string) (map[string][]string, error) {
	got := map[string][]string{}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range c.Resources.Limits {
			if !yield(string(k)) {
				return
			}
		}
	}) {
		q := c.Resources.Limits[v1.ResourceName(name)]
		needed := int(q.Value())
		if needed == 0 || !pool.isDeviceResource(name) {
			continue
		}
		free, healthy, ok := pool.healthyFree(name)
		switch {
		case !ok:
			return nil, fmt.Errorf("cannot allocate unregistered device %s", name)
		case healthy == 0:
			return nil, fmt.Errorf("no healthy devices present; cannot allocate unhealthy devices %s", name)
		}
		ids := append([]string(nil), reusable[name]...)
		if len(ids) > needed {
			ids = ids[:needed]
		}
		available := without(free, taken[name])
		if rest := needed - len(ids); rest > len(available) {
			return nil, fmt.Errorf("requested number of devices unavailable for %s. Requested: %d, Available: %d", name, rest, len(available))
		} else {
			ids = append(ids, available[:rest]...)
		}
		slices.Sort(ids)
		got[name] = ids
		taken[name] = union(taken[name], ids)
	}
	return got, nil
}

// union is a and b, sorted, without repeats.
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// without is a without the elements of b.
func without(a, b []string) []string {
	return slices.DeleteFunc(slices.Clone(a), func(s string) bool { return slices.Contains(b, s) })
}
