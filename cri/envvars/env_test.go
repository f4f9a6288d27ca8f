package envvars

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/internal/crifake"
)

// envPod is a pod with labels, annotations, a node and a service account,
// whose container "app" requests 250m CPU and 100Mi and limits 64Mi of
// memory only, beside a container "other" limiting 1.5 CPU.
func envPod(env ...v1.EnvVar) *v1.Pod {
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}, crifake.Ctr{Name: "other"})
	pod.Labels = map[string]string{"app": "web", "tier": "front"}
	pod.Annotations = map[string]string{"example.com/note": "hello"}
	pod.Spec.NodeName = "node-1"
	pod.Spec.ServiceAccountName = "sa"
	q := resource.MustParse
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: q("250m"), v1.ResourceMemory: q("100Mi")},
		Limits:   v1.ResourceList{v1.ResourceMemory: q("64Mi")},
	}
	pod.Spec.Containers[1].Resources = v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: q("1500m")}}
	pod.Spec.Containers[0].Env = env
	return pod
}

func resolveEnv(pod *v1.Pod) ([]*runtimeapi.KeyValue, error) {
	q := resource.MustParse
	return ContainerEnv(context.Background(), Input{
		Pod: pod, Container: &pod.Spec.Containers[0], ConfigMaps: testObjects, Secrets: testObjects,
		PodIPs: []string{"10.0.0.5", "fd00::5"}, HostIPs: []string{"192.168.1.2", "fd00::2"},
		Allocatable: v1.ResourceList{v1.ResourceCPU: q("4"), v1.ResourceMemory: q("8Gi"), v1.ResourceEphemeralStorage: q("100Gi")},
	})
}

func TestContainerEnvValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  v1.EnvVar
		want string
	}{
		{"plain", v1.EnvVar{Name: "X", Value: "v"}, "v"},
		{"metadata.name", crifake.FieldEnv("X", "metadata.name"), "web"},
		{"metadata.namespace", crifake.FieldEnv("X", "metadata.namespace"), "ns"},
		{"metadata.uid", crifake.FieldEnv("X", "metadata.uid"), "uid-web"},
		{"label", crifake.FieldEnv("X", "metadata.labels['tier']"), "front"},
		{"missing label", crifake.FieldEnv("X", "metadata.labels['none']"), ""},
		{"annotation", crifake.FieldEnv("X", "metadata.annotations['example.com/note']"), "hello"},
		{"spec.nodeName", crifake.FieldEnv("X", "spec.nodeName"), "node-1"},
		{"spec.serviceAccountName", crifake.FieldEnv("X", "spec.serviceAccountName"), "sa"},
		{"status.hostIP", crifake.FieldEnv("X", "status.hostIP"), "192.168.1.2"},
		{"status.hostIPs", crifake.FieldEnv("X", "status.hostIPs"), "192.168.1.2,fd00::2"},
		{"status.podIP", crifake.FieldEnv("X", "status.podIP"), "10.0.0.5"},
		{"status.podIPs", crifake.FieldEnv("X", "status.podIPs"), "10.0.0.5,fd00::5"},
		{"requests.cpu in millicores", crifake.ResourceEnv("X", "", "requests.cpu", "1m"), "250"},
		{"requests.cpu rounded up to cores", crifake.ResourceEnv("X", "", "requests.cpu", ""), "1"},
		{"requests.memory", crifake.ResourceEnv("X", "", "requests.memory", ""), "104857600"},
		{"requests.memory in Mi", crifake.ResourceEnv("X", "", "requests.memory", "1Mi"), "100"},
		{"requests.memory in Gi, rounded up", crifake.ResourceEnv("X", "", "requests.memory", "1Gi"), "1"},
		{"limits.memory", crifake.ResourceEnv("X", "", "limits.memory", "1Mi"), "64"},
		{"limits.cpu unset: the node's", crifake.ResourceEnv("X", "", "limits.cpu", ""), "4"},
		{"limits.cpu unset: the node's, in millicores", crifake.ResourceEnv("X", "", "limits.cpu", "1m"), "4000"},
		{"limits.ephemeral-storage unset: the node's", crifake.ResourceEnv("X", "", "limits.ephemeral-storage", "1Gi"), "100"},
		{"requests.ephemeral-storage unset", crifake.ResourceEnv("X", "", "requests.ephemeral-storage", ""), "0"},
		{"requests.cpu unset", crifake.ResourceEnv("X", "other", "requests.cpu", ""), "0"},
		{"another container's limit", crifake.ResourceEnv("X", "other", "limits.cpu", "1m"), "1500"},
		{"another container's limit rounded up", crifake.ResourceEnv("X", "other", "limits.cpu", ""), "2"},
		{"this container by name", crifake.ResourceEnv("X", "app", "limits.memory", "1Mi"), "64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			envs, err := resolveEnv(envPod(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			got := "<none>"
			if len(envs) == 1 && envs[0].Key == "X" {
				got = string(envs[0].Value)
			} else if len(envs) != 0 {
				t.Fatalf("envs %v", envs)
			}
			if got != tc.want {
				t.Errorf("X = %q, want %q", got, tc.want)
			}
		})
	}
}

// Values expand the variables defined before them, in spec order; a later
// definition replaces an earlier one in place; valueFrom values are never
// expanded.
func TestContainerEnvExpansion(t *testing.T) {
	pod := envPod(
		v1.EnvVar{Name: "LATER_REF", Value: "$(NAME)"},
		crifake.FieldEnv("NAME", "metadata.name"),
		v1.EnvVar{Name: "GREETING", Value: "hi $(NAME) at $(POD_IP), $$(NAME) $(NONE)"},
		crifake.FieldEnv("POD_IP", "status.podIP"),
		v1.EnvVar{Name: "AFTER", Value: "$(POD_IP)"},
		v1.EnvVar{Name: "NAME", Value: "renamed-$(NAME)"},
		v1.EnvVar{Name: "LABEL", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.annotations['example.com/note']"}}},
	)
	pod.Annotations["example.com/note"] = "$(NAME)"
	envs, err := resolveEnv(pod)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, kv := range envs {
		got = append(got, kv.Key+"="+string(kv.Value))
	}
	want := []string{
		"LATER_REF=$(NAME)",
		"NAME=renamed-web",
		"GREETING=hi web at $(POD_IP), $(NAME) $(NONE)",
		"POD_IP=10.0.0.5",
		"AFTER=10.0.0.5",
		"LABEL=$(NAME)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("env:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestContainerEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*v1.Container)
		want []string
	}{
		{"unknown field", func(c *v1.Container) { c.Env = []v1.EnvVar{crifake.FieldEnv("U", "metadata.labels")} }, []string{"env U", `fieldRef "metadata.labels" is not supported`}},
		{"unknown resource", func(c *v1.Container) { c.Env = []v1.EnvVar{crifake.ResourceEnv("R", "", "limits.example.com/gpu", "")} }, []string{"env R", `"limits.example.com/gpu" is not supported`}},
		{"unknown container", func(c *v1.Container) { c.Env = []v1.EnvVar{crifake.ResourceEnv("R", "nope", "limits.cpu", "")} }, []string{"env R", `container "nope"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := envPod()
			tc.edit(&pod.Spec.Containers[0])
			envs, err := resolveEnv(pod)
			if err == nil {
				t.Fatalf("envs %v, want an error", envs)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
		})
	}
}
