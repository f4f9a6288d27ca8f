package cri

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// envInput is what a container's environment is resolved from.
type envInput struct {
	pod *v1.Pod
	c   *v1.Container
	// podIPs are the sandbox's IPs, the first one the pod's IP.
	podIPs []string
	// hostIPs are the node's IPs (status.hostIP, status.hostIPs).
	hostIPs []string
	// allocatable stands in for the limits a container does not set, in
	// resourceFieldRef (the kubelet's defaultPodLimitsForDownwardAPI).
	allocatable v1.ResourceList
}

// containerEnv is the container's environment as the kubelet's
// makeEnvironmentVariables makes it: each variable in spec order, a later
// one of the same name replacing the earlier value, a plain value with the
// $(VAR) references to the variables before it expanded, and valueFrom's
// fieldRef and resourceFieldRef resolved. Config maps, secrets, files and
// envFrom are not supported: an optional one is skipped, as the kubelet
// skips a missing optional one; any other fails the container.
func containerEnv(in envInput) ([]*runtimeapi.KeyValue, error) {
	pod, c := in.pod, in.c
	for _, from := range c.EnvFrom {
		if !envFromOptional(from) {
			return nil, fmt.Errorf("container %q of pod %s/%s: envFrom %s is not supported", c.Name, pod.Namespace, pod.Name, envFromName(from))
		}
	}
	vars := map[string]string{}
	var order []string
	for _, e := range c.Env {
		var value string
		if e.ValueFrom == nil {
			value = expand(e.Value, vars)
		} else {
			v, skip, err := in.valueFrom(e.ValueFrom)
			if err != nil {
				return nil, fmt.Errorf("container %q of pod %s/%s: env %s: %w", c.Name, pod.Namespace, pod.Name, e.Name, err)
			}
			if skip {
				continue
			}
			value = v
		}
		if _, seen := vars[e.Name]; !seen {
			order = append(order, e.Name)
		}
		vars[e.Name] = value
	}
	envs := make([]*runtimeapi.KeyValue, 0, len(order))
	for _, name := range order {
		envs = append(envs, &runtimeapi.KeyValue{Key: name, Value: []byte(vars[name])})
	}
	return envs, nil
}

// envVars is envs by name, for the expansion of command and args.
func envVars(envs []*runtimeapi.KeyValue) map[string]string {
	vars := make(map[string]string, len(envs))
	for _, kv := range envs {
		vars[kv.Key] = string(kv.Value)
	}
	return vars
}

// valueFrom resolves one valueFrom source; skip says an optional
// unsupported source leaves the variable out.
func (in envInput) valueFrom(src *v1.EnvVarSource) (value string, skip bool, err error) {
	switch {
	case src.FieldRef != nil:
		v, err := in.fieldValue(src.FieldRef.FieldPath)
		return v, false, err
	case src.ResourceFieldRef != nil:
		v, err := in.resourceValue(src.ResourceFieldRef)
		return v, false, err
	case src.ConfigMapKeyRef != nil:
		return unsupported(src.ConfigMapKeyRef.Optional, "configMapKeyRef")
	case src.SecretKeyRef != nil:
		return unsupported(src.SecretKeyRef.Optional, "secretKeyRef")
	case src.FileKeyRef != nil:
		return unsupported(src.FileKeyRef.Optional, "fileKeyRef")
	}
	return "", false, fmt.Errorf("valueFrom names no source")
}

// unsupported skips an optional source the agent cannot read, and fails
// on any other.
func unsupported(optional *bool, kind string) (string, bool, error) {
	if optional != nil && *optional {
		return "", true, nil
	}
	return "", false, fmt.Errorf("valueFrom.%s is not supported (only an optional one, which is skipped)", kind)
}

func envFromOptional(from v1.EnvFromSource) bool {
	switch {
	case from.ConfigMapRef != nil:
		return from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional
	case from.SecretRef != nil:
		return from.SecretRef.Optional != nil && *from.SecretRef.Optional
	}
	return false
}

func envFromName(from v1.EnvFromSource) string {
	switch {
	case from.ConfigMapRef != nil:
		return fmt.Sprintf("configMapRef %q", from.ConfigMapRef.Name)
	case from.SecretRef != nil:
		return fmt.Sprintf("secretRef %q", from.SecretRef.Name)
	}
	return "without a source"
}

// fieldValue is the value of a fieldRef's path, the ones the API allows in
// env (the kubelet's podFieldSelectorRuntimeValue).
func (in envInput) fieldValue(path string) (string, error) {
	pod := in.pod
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return first(in.hostIPs), nil
	case "status.hostIPs":
		return strings.Join(in.hostIPs, ","), nil
	case "status.podIP":
		return first(in.podIPs), nil
	case "status.podIPs":
		return strings.Join(in.podIPs, ","), nil
	}
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	return "", fmt.Errorf("fieldRef %q is not supported", path)
}

// subscript is k of path "<field>['k']".
func subscript(path, field string) (string, bool) {
	rest, ok := strings.CutPrefix(path, field+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// resourceValue is a resourceFieldRef's value: the named container's (this
// one's when unnamed) request or limit divided by the divisor (1 when
// unset), rounded up, as the kubelet's ExtractContainerResourceValue does.
// A limit the container does not set is the node's allocatable amount.
func (in envInput) resourceValue(ref *v1.ResourceFieldSelector) (string, error) {
	c := in.c
	if ref.ContainerName != "" && ref.ContainerName != c.Name {
		if c = findContainer(in.pod, ref.ContainerName); c == nil {
			return "", fmt.Errorf("resourceFieldRef names container %q, which the pod does not have", ref.ContainerName)
		}
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	res := v1.ResourceName(name)
	if !ok || (kind != "limits" && kind != "requests") ||
		(res != v1.ResourceCPU && res != v1.ResourceMemory && res != v1.ResourceEphemeralStorage) {
		return "", fmt.Errorf("resourceFieldRef %q is not supported", ref.Resource)
	}
	var q resource.Quantity
	if kind == "requests" {
		q = c.Resources.Requests[res]
	} else if l, set := c.Resources.Limits[res]; set {
		q = l
	} else {
		q = in.allocatable[res]
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if res == v1.ResourceCPU {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}

// findContainer is the pod's container or init container of that name.
func findContainer(pod *v1.Pod, name string) *v1.Container {
	for _, list := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// setEnv gives cfg the container's environment, and expands $(VAR) in its
// command and args with it (the kubelet's ExpandContainerCommandAndArgs).
// The pod's IPs are its sandbox's, asked only when a variable needs them
// (a sandbox without a status runs containers all the same), or the
// node's on the host network.
func (s *Syncer) setEnv(ctx context.Context, ps *podSync, c *v1.Container, cfg *runtimeapi.ContainerConfig) error {
	var ips []string
	switch {
	case ps.pod.Spec.HostNetwork:
		ips = s.opts.HostIPs
	case needsPodIPs(c):
		var err error
		if ips, err = ps.sandboxIPs(ctx, s.rt); err != nil {
			return err
		}
	}
	envs, err := containerEnv(envInput{pod: ps.pod, c: c, podIPs: ips, hostIPs: s.opts.HostIPs, allocatable: s.opts.Allocatable})
	if err != nil {
		return err
	}
	vars := envVars(envs)
	cfg.Envs = envs
	cfg.Command = expandAll(c.Command, vars)
	cfg.Args = expandAll(c.Args, vars)
	return nil
}

// needsPodIPs reports whether the container's environment has the pod's IP.
func needsPodIPs(c *v1.Container) bool {
	for _, e := range c.Env {
		if f := e.ValueFrom; f != nil && f.FieldRef != nil && (f.FieldRef.FieldPath == "status.podIP" || f.FieldRef.FieldPath == "status.podIPs") {
			return true
		}
	}
	return false
}
