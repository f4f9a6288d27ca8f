package kuberuntime

import (
	"context"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri/envvars"
	"github.com/podlife/podlife/cri/volume"
	"github.com/podlife/podlife/internal/crifake"
)

// The sync gives the container the resolved environment, with the
// sandbox's IP and a Secret's key, and expands command and args with it;
// a missing key leaves the container waiting in CreateContainerConfigError
// with the kubelet's message and an event, and creates nothing.
func TestSyncPodEnvironment(t *testing.T) {
	secrets := oneSecret{ObjectMeta: metav1.ObjectMeta{Name: "creds"}, Data: map[string][]byte{"user": []byte("admin")}}
	h := newHarness(t, Options{HostIPs: []string{"192.168.1.2"}, VolumeAPI: volume.API{Secrets: secrets}}, "img")
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
	c.Env = []v1.EnvVar{crifake.FieldEnv("POD_IP", "status.podIP"), crifake.FieldEnv("HOST_IP", "status.hostIP"), {Name: "MSG", Value: "at $(POD_IP)"},
		{Name: "USER", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Key: "user"}}}}
	c.Command = []string{"echo", "$(MSG)", "$$(MSG)"}
	c.Args = []string{"$(HOST_IP)", "$(NONE)"}
	h.mustSync(pod)
	mu.Lock()
	cfg := got
	mu.Unlock()
	env := envvars.Vars(cfg.GetEnvs())
	if env["POD_IP"] != "192.168.192.168" || env["MSG"] != "at 192.168.192.168" || env["HOST_IP"] != "192.168.1.2" || env["USER"] != "admin" {
		t.Errorf("env %v", env)
	}
	if strings.Join(cfg.Command, " ") != "echo at 192.168.192.168 $(MSG)" || strings.Join(cfg.Args, " ") != "192.168.1.2 $(NONE)" {
		t.Errorf("command %q args %q", cfg.Command, cfg.Args)
	}
	if c.Command[1] != "$(MSG)" {
		t.Errorf("the pod's command was changed: %q", c.Command)
	}

	bad := crifake.MakePod("bad", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	bad.Spec.Containers[0].Env = []v1.EnvVar{{Name: "PASSWORD", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Key: "password"}}}}
	if _, err := h.syncPod(bad); err == nil || !strings.Contains(err.Error(), `container "app" of pod ns/bad: env PASSWORD`) {
		t.Fatalf("SyncPod error %v", err)
	}
	st := h.statuses.last(t, bad.UID)
	if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "CreateContainerConfigError" || !strings.Contains(w.Message, "couldn't find key password in Secret ns/creds") {
		t.Errorf("state %+v, want waiting in CreateContainerConfigError", st.ContainerStatuses[0].State)
	}
	if msgs := h.events.Messages(bad.UID, "Failed"); len(msgs) != 1 || !strings.Contains(msgs[0], "env PASSWORD") {
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
		got = envvars.Vars(cfg.Envs)
		return nil
	}
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	pod.Spec.HostNetwork = true
	pod.Spec.Containers[0].Env = []v1.EnvVar{crifake.FieldEnv("POD_IPS", "status.podIPs")}
	h.mustSync(pod)
	mu.Lock()
	defer mu.Unlock()
	if got["POD_IPS"] != "192.168.1.2,fd00::2" {
		t.Errorf("env %v", got)
	}
}

// oneSecret is an API with one Secret in namespace ns.
type oneSecret v1.Secret

func (s oneSecret) Secret(_ context.Context, ns, name string) (*v1.Secret, error) {
	if ns != "ns" || name != s.Name {
		return nil, apierrors.NewNotFound(v1.Resource("secret"), name)
	}
	secret := v1.Secret(s)
	return &secret, nil
}
