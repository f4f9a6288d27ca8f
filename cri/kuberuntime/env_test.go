package kuberuntime

import (
	"context"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/internal/crifake"
)

func fieldEnv(name, path string) v1.EnvVar {
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}}
}

func resourceEnv(name, container, res, divisor string) v1.EnvVar {
	ref := &v1.ResourceFieldSelector{ContainerName: container, Resource: res}
	if divisor != "" {
		ref.Divisor = resource.MustParse(divisor)
	}
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{ResourceFieldRef: ref}}
}

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
	return containerEnv(envInput{
		pod: pod, c: &pod.Spec.Containers[0],
		podIPs: []string{"10.0.0.5", "fd00::5"}, hostIPs: []string{"192.168.1.2", "fd00::2"},
		allocatable: v1.ResourceList{v1.ResourceCPU: q("4"), v1.ResourceMemory: q("8Gi"), v1.ResourceEphemeralStorage: q("100Gi")},
	})
}

func TestContainerEnvValues(t *testing.T) {
	yes := new(true)
	for _, tc := range []struct {
		name string
		env  v1.EnvVar
		want string
	}{
		{"plain", v1.EnvVar{Name: "X", Value: "v"}, "v"},
		{"metadata.name", fieldEnv("X", "metadata.name"), "web"},
		{"metadata.namespace", fieldEnv("X", "metadata.namespace"), "ns"},
		{"metadata.uid", fieldEnv("X", "metadata.uid"), "uid-web"},
		{"label", fieldEnv("X", "metadata.labels['tier']"), "front"},
		{"missing label", fieldEnv("X", "metadata.labels['none']"), ""},
		{"annotation", fieldEnv("X", "metadata.annotations['example.com/note']"), "hello"},
		{"spec.nodeName", fieldEnv("X", "spec.nodeName"), "node-1"},
		{"spec.serviceAccountName", fieldEnv("X", "spec.serviceAccountName"), "sa"},
		{"status.hostIP", fieldEnv("X", "status.hostIP"), "192.168.1.2"},
		{"status.hostIPs", fieldEnv("X", "status.hostIPs"), "192.168.1.2,fd00::2"},
		{"status.podIP", fieldEnv("X", "status.podIP"), "10.0.0.5"},
		{"status.podIPs", fieldEnv("X", "status.podIPs"), "10.0.0.5,fd00::5"},
		{"requests.cpu in millicores", resourceEnv("X", "", "requests.cpu", "1m"), "250"},
		{"requests.cpu rounded up to cores", resourceEnv("X", "", "requests.cpu", ""), "1"},
		{"requests.memory", resourceEnv("X", "", "requests.memory", ""), "104857600"},
		{"requests.memory in Mi", resourceEnv("X", "", "requests.memory", "1Mi"), "100"},
		{"requests.memory in Gi, rounded up", resourceEnv("X", "", "requests.memory", "1Gi"), "1"},
		{"limits.memory", resourceEnv("X", "", "limits.memory", "1Mi"), "64"},
		{"limits.cpu unset: the node's", resourceEnv("X", "", "limits.cpu", ""), "4"},
		{"limits.cpu unset: the node's, in millicores", resourceEnv("X", "", "limits.cpu", "1m"), "4000"},
		{"limits.ephemeral-storage unset: the node's", resourceEnv("X", "", "limits.ephemeral-storage", "1Gi"), "100"},
		{"requests.ephemeral-storage unset", resourceEnv("X", "", "requests.ephemeral-storage", ""), "0"},
		{"requests.cpu unset", resourceEnv("X", "other", "requests.cpu", ""), "0"},
		{"another container's limit", resourceEnv("X", "other", "limits.cpu", "1m"), "1500"},
		{"another container's limit rounded up", resourceEnv("X", "other", "limits.cpu", ""), "2"},
		{"this container by name", resourceEnv("X", "app", "limits.memory", "1Mi"), "64"},
		{"optional config map skipped", v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{Key: "k", Optional: yes}}}, "<none>"},
		{"optional secret skipped", v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{Key: "k", Optional: yes}}}, "<none>"},
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
		fieldEnv("NAME", "metadata.name"),
		v1.EnvVar{Name: "GREETING", Value: "hi $(NAME) at $(POD_IP), $$(NAME) $(NONE)"},
		fieldEnv("POD_IP", "status.podIP"),
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
	no := new(false)
	for _, tc := range []struct {
		name string
		edit func(*v1.Container)
		want []string
	}{
		{"config map", func(c *v1.Container) {
			c.Env = []v1.EnvVar{{Name: "CM", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{Key: "k"}}}}
		}, []string{`container "app" of pod ns/web`, "env CM", "configMapKeyRef is not supported"}},
		{"secret, optional false", func(c *v1.Container) {
			c.Env = []v1.EnvVar{{Name: "S", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{Key: "k", Optional: no}}}}
		}, []string{"env S", "secretKeyRef is not supported"}},
		{"file", func(c *v1.Container) {
			c.Env = []v1.EnvVar{{Name: "F", ValueFrom: &v1.EnvVarSource{FileKeyRef: &v1.FileKeySelector{Key: "k"}}}}
		}, []string{"env F", "fileKeyRef is not supported"}},
		{"envFrom config map", func(c *v1.Container) {
			c.EnvFrom = []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}}
		}, []string{`container "app" of pod ns/web`, `envFrom configMapRef "cfg" is not supported`}},
		{"envFrom secret", func(c *v1.Container) {
			c.EnvFrom = []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "s"}}}}
		}, []string{`envFrom secretRef "s"`}},
		{"unknown field", func(c *v1.Container) { c.Env = []v1.EnvVar{fieldEnv("U", "metadata.labels")} }, []string{"env U", `fieldRef "metadata.labels" is not supported`}},
		{"unknown resource", func(c *v1.Container) { c.Env = []v1.EnvVar{resourceEnv("R", "", "limits.example.com/gpu", "")} }, []string{"env R", `"limits.example.com/gpu" is not supported`}},
		{"unknown container", func(c *v1.Container) { c.Env = []v1.EnvVar{resourceEnv("R", "nope", "limits.cpu", "")} }, []string{"env R", `container "nope"`}},
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
	yes := new(true)
	pod := envPod(v1.EnvVar{Name: "A", Value: "1"})
	pod.Spec.Containers[0].EnvFrom = []v1.EnvFromSource{
		{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Optional: yes}},
		{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "s"}, Optional: yes}},
	}
	if envs, err := resolveEnv(pod); err != nil || len(envs) != 1 {
		t.Errorf("optional envFrom: %v, %v; want them skipped", envs, err)
	}
}

// The sync gives the container the resolved environment, with the
// sandbox's IP, and expands command and args with it; an unsupported
// source leaves the container waiting in CreateContainerConfigError with
// an event, and creates nothing.
func TestSyncPodEnvironment(t *testing.T) {
	h := newHarness(t, Options{HostIPs: []string{"192.168.1.2"}}, "img")
	var mu sync.Mutex
	var got *runtimeapi.ContainerConfig
	h.rt.OnCreate = func(_ context.Context, _ string, cfg *runtimeapi.ContainerConfig) error {
		mu.Lock()
		defer mu.Unlock()
		got = cfg
		return nil
	}
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	c := &pod.Spec.Containers[0]
	c.Env = []v1.EnvVar{fieldEnv("POD_IP", "status.podIP"), fieldEnv("HOST_IP", "status.hostIP"), {Name: "MSG", Value: "at $(POD_IP)"}}
	c.Command = []string{"echo", "$(MSG)", "$$(MSG)"}
	c.Args = []string{"$(HOST_IP)", "$(NONE)"}
	h.mustSync(pod)
	mu.Lock()
	cfg := got
	mu.Unlock()
	env := envVars(cfg.GetEnvs())
	if env["POD_IP"] != "192.168.192.168" || env["MSG"] != "at 192.168.192.168" || env["HOST_IP"] != "192.168.1.2" {
		t.Errorf("env %v", env)
	}
	if strings.Join(cfg.Command, " ") != "echo at 192.168.192.168 $(MSG)" || strings.Join(cfg.Args, " ") != "192.168.1.2 $(NONE)" {
		t.Errorf("command %q args %q", cfg.Command, cfg.Args)
	}
	if c.Command[1] != "$(MSG)" {
		t.Errorf("the pod's command was changed: %q", c.Command)
	}

	bad := crifake.MakePod("bad", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	bad.Spec.Containers[0].Env = []v1.EnvVar{{Name: "PASSWORD", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{Key: "k"}}}}
	if _, err := h.syncPod(bad); err == nil || !strings.Contains(err.Error(), `container "app" of pod ns/bad: env PASSWORD`) {
		t.Fatalf("SyncPod error %v", err)
	}
	st := h.statuses.last(t, bad.UID)
	if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "CreateContainerConfigError" || !strings.Contains(w.Message, "secretKeyRef") {
		t.Errorf("state %+v, want waiting in CreateContainerConfigError", st.ContainerStatuses[0].State)
	}
	if msgs := h.events.messages(bad.UID, "Failed"); len(msgs) != 1 || !strings.Contains(msgs[0], "env PASSWORD") {
		t.Errorf("Failed events %q", msgs)
	}
	if n := h.calls("CreateContainer"); n != 1 {
		t.Errorf("CreateContainer called %d times, want once (for web)", n)
	}
}

// A host-network pod's IP is the node's.
func TestSyncPodEnvironmentHostNetwork(t *testing.T) {
	h := newHarness(t, Options{HostIPs: []string{"192.168.1.2", "fd00::2"}}, "img")
	var mu sync.Mutex
	var got map[string]string
	h.rt.OnCreate = func(_ context.Context, _ string, cfg *runtimeapi.ContainerConfig) error {
		mu.Lock()
		defer mu.Unlock()
		got = envVars(cfg.Envs)
		return nil
	}
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	pod.Spec.HostNetwork = true
	pod.Spec.Containers[0].Env = []v1.EnvVar{fieldEnv("POD_IPS", "status.podIPs")}
	h.mustSync(pod)
	mu.Lock()
	defer mu.Unlock()
	if got["POD_IPS"] != "192.168.1.2,fd00::2" {
		t.Errorf("env %v", got)
	}
}
