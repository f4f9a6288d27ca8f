// Package envvars makes a container's environment as the kubelet does
// (kubelet: kuberuntime's makeEnvironmentVariables, pkg/fieldpath, and the
// $(VAR) expansion of third_party/forked/golang/expansion): its envFrom
// variables, then its variables in spec order, $(VAR) references
// expanded, fieldRef, resourceFieldRef, configMapKeyRef and secretKeyRef
// resolved (objects.go), fileKeyRef read from an emptyDir's env file
// (envfile.go), and the same expansion of its command and args.
// The downward API's values (downward.go) are shared with downwardAPI
// volumes. The Services' variables (services.go: the kubelet's
// getServiceEnvVarMap and pkg/kubelet/envvars) follow the container's own.
package envvars

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Input is what a container's environment is resolved from.
type Input struct {
	Pod       *v1.Pod
	Container *v1.Container
	// PodIPs are the sandbox's IPs, the first one the pod's IP.
	PodIPs []string
	// HostIPs are the node's IPs (status.hostIP, status.hostIPs).
	HostIPs []string
	// Allocatable stands in for the limits a container does not set, in
	// resourceFieldRef (the kubelet's defaultPodLimitsForDownwardAPI).
	Allocatable v1.ResourceList
	// ConfigMaps and Secrets read the objects envFrom, configMapKeyRef
	// and secretKeyRef name, in the pod's namespace; nil (standalone
	// mode) refuses them with ErrNoAPI.
	ConfigMaps ConfigMapGetter
	Secrets    SecretGetter
	// Services are the cluster's Services, whose variables the container
	// gets (services.go); nil (standalone mode) is none.
	Services ServiceLister
	// EmptyDirs are the directories on the node of the pod's emptyDir
	// volumes, by volume name, where fileKeyRef reads its env files; nil
	// where the runtime mounts none (the embedded one).
	EmptyDirs map[string]string
}

// ContainerEnv is the container's environment as the kubelet's
// makeEnvironmentVariables makes it: first the envFrom sources' variables,
// then each variable in spec order, a later one of the same name
// replacing the earlier value, a plain value with the $(VAR) references
// to the variables before it expanded, and valueFrom resolved. A missing
// optional ConfigMap, Secret or key leaves its variables out; a missing
// required one fails the container with the kubelet's message (couldn't
// find key K in ConfigMap ns/name), which the syncer reports as
// CreateContainerConfigError; fileKeyRef is read as the kubelet reads it
// (envfile.go), when the container is created. The Services' variables
// (services.go) come last, each one the container does not define
// itself, and a value's $(VAR) may name them.
func ContainerEnv(ctx context.Context, in Input) ([]*runtimeapi.KeyValue, error) {
	pod, c := in.Pod, in.Container
	services, err := serviceEnv(pod, in.Services)
	if err != nil {
		return nil, fmt.Errorf("container %q of pod %s/%s: %w", c.Name, pod.Namespace, pod.Name, err)
	}
	objs := &objectReader{ctx: ctx, namespace: pod.Namespace, configMaps: in.ConfigMaps, secrets: in.Secrets,
		cms: map[string]*v1.ConfigMap{}, ss: map[string]*v1.Secret{}}
	vars := map[string]string{}
	// expansion is what $(VAR) sees: the container's variables so far
	// over the Services' (the kubelet's MappingFuncFor(tmpEnv, serviceEnv)).
	expansion := make(map[string]string, len(services))
	for _, e := range services {
		expansion[e.Name] = e.Value
	}
	var order []string
	set := func(name, value string) {
		if _, seen := vars[name]; !seen {
			order = append(order, name)
		}
		vars[name] = value
		expansion[name] = value
	}
	if err := objs.envFrom(c.EnvFrom, set); err != nil {
		return nil, fmt.Errorf("container %q of pod %s/%s: envFrom: %w", c.Name, pod.Namespace, pod.Name, err)
	}
	for _, e := range c.Env {
		var value string
		if e.ValueFrom == nil {
			value = expand(e.Value, expansion)
		} else {
			v, skip, err := in.valueFrom(e.ValueFrom, objs)
			if err != nil {
				return nil, fmt.Errorf("container %q of pod %s/%s: env %s: %w", c.Name, pod.Namespace, pod.Name, e.Name, err)
			}
			if skip {
				continue
			}
			value = v
		}
		set(e.Name, value)
	}
	envs := make([]*runtimeapi.KeyValue, 0, len(order)+len(services))
	for _, name := range order {
		envs = append(envs, &runtimeapi.KeyValue{Key: name, Value: []byte(vars[name])})
	}
	for _, e := range services {
		if _, own := vars[e.Name]; !own {
			envs = append(envs, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
		}
	}
	return envs, nil
}

// Vars is envs by name, for the expansion of command and args.
func Vars(envs []*runtimeapi.KeyValue) map[string]string {
	vars := make(map[string]string, len(envs))
	for _, kv := range envs {
		vars[kv.Key] = string(kv.Value)
	}
	return vars
}

// valueFrom resolves one valueFrom source; skip says an optional source
// that is missing leaves the variable out.
func (in Input) valueFrom(src *v1.EnvVarSource, objs *objectReader) (value string, skip bool, err error) {
	switch {
	case src.FieldRef != nil:
		v, err := in.fieldValue(src.FieldRef.FieldPath)
		return v, false, err
	case src.ResourceFieldRef != nil:
		v, err := ResourceFieldValue(in.Pod, in.Container, src.ResourceFieldRef, in.Allocatable)
		return v, false, err
	case src.ConfigMapKeyRef != nil:
		return objs.configMapKey(src.ConfigMapKeyRef)
	case src.SecretKeyRef != nil:
		return objs.secretKey(src.SecretKeyRef)
	case src.FileKeyRef != nil:
		return in.fileKey(src.FileKeyRef)
	}
	return "", false, fmt.Errorf("valueFrom names no source")
}

// fieldValue is the value of a fieldRef's path, the ones the API allows in
// env (the kubelet's podFieldSelectorRuntimeValue).
func (in Input) fieldValue(path string) (string, error) {
	pod := in.Pod
	if v, ok := MetadataValue(pod, path); ok {
		return v, nil
	}
	switch path {
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return first(in.HostIPs), nil
	case "status.hostIPs":
		return strings.Join(in.HostIPs, ","), nil
	case "status.podIP":
		return first(in.PodIPs), nil
	case "status.podIPs":
		return strings.Join(in.PodIPs, ","), nil
	}
	return "", fmt.Errorf("fieldRef %q is not supported", path)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// NeedsPodIPs reports whether the container's environment has the pod's IP.
func NeedsPodIPs(c *v1.Container) bool {
	for _, e := range c.Env {
		if f := e.ValueFrom; f != nil && f.FieldRef != nil && (f.FieldRef.FieldPath == "status.podIP" || f.FieldRef.FieldPath == "status.podIPs") {
			return true
		}
	}
	return false
}
