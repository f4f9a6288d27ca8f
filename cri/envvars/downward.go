package envvars

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podlife/podlife/cri"
)

// The downward API's values, shared by env (valueFrom) and downwardAPI
// volumes, so that both show a pod the same way.

// MetadataValue is the value of one of the pod's metadata fields the
// downward API knows in env and volumes alike: name, namespace, UID, and
// one label or annotation by key (metadata.labels['app']). ok is false for
// any other path.
func MetadataValue(pod *v1.Pod, path string) (value string, ok bool) {
	switch path {
	case "metadata.name":
		return pod.Name, true
	case "metadata.namespace":
		return pod.Namespace, true
	case "metadata.uid":
		return string(pod.UID), true
	}
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], true
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], true
	}
	return "", false
}

// subscript is k of path "<field>['k']".
func subscript(path, field string) (string, bool) {
	rest, ok := strings.CutPrefix(path, field+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// ResourceFieldValue is a resourceFieldRef's value, as the kubelet's
// ExtractContainerResourceValue computes it: the named container's (c when
// the reference names none) request or limit in units of the divisor (1
// when not set), rounded up; CPU in millicores, the others in bytes. A
// limit the container does not set is the node's allocatable amount.
func ResourceFieldValue(pod *v1.Pod, c *v1.Container, ref *v1.ResourceFieldSelector, allocatable v1.ResourceList) (string, error) {
	if ref.ContainerName != "" && (c == nil || ref.ContainerName != c.Name) {
		if c = cri.ContainerSpec(pod, ref.ContainerName); c == nil {
			return "", fmt.Errorf("resourceFieldRef names container %q, which the pod does not have", ref.ContainerName)
		}
	}
	if c == nil {
		return "", fmt.Errorf("resourceFieldRef %q names no container", ref.Resource)
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	res := v1.ResourceName(name)
	if !ok || (kind != "limits" && kind != "requests") ||
		(res != v1.ResourceCPU && res != v1.ResourceMemory && res != v1.ResourceEphemeralStorage &&
			!strings.HasPrefix(name, v1.ResourceHugePagesPrefix)) {
		return "", fmt.Errorf("resourceFieldRef %q is not supported (limits. or requests. of cpu, memory, ephemeral-storage, hugepages-*)", ref.Resource)
	}
	var q resource.Quantity
	if kind == "requests" {
		q = c.Resources.Requests[res]
	} else if l, set := c.Resources.Limits[res]; set {
		q = l
	} else {
		q = allocatable[res]
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if res == v1.ResourceCPU {
		if divisor.Sign() <= 0 {
			return "", fmt.Errorf("resourceFieldRef %q: divisor %s is not positive", ref.Resource, divisor.String())
		}
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	if divisor.Value() <= 0 {
		return "", fmt.Errorf("resourceFieldRef %q: divisor %s is not a positive number of units", ref.Resource, divisor.String())
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}
