package kuberuntime

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
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
		v, err := resourceFieldValue(in.pod, in.c, src.ResourceFieldRef, in.allocatable)
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
	if v, ok := metadataValue(pod, path); ok {
		return v, nil
	}
	switch path {
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
	return "", fmt.Errorf("fieldRef %q is not supported", path)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
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
	envs, err := containerEnv(envInput{pod: ps.pod, c: c, podIPs: ips, hostIPs: s.opts.HostIPs, allocatable: s.allocatable()})
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
