package kuberuntime

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/internal/crifake"
)

func TestUnappliedIsolation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*v1.Pod)
		pod  []string
		ctr  []string
	}{
		{"nothing asked", func(*v1.Pod) {}, nil, nil},
		{"empty security contexts", func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{}
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{}
		}, nil, nil},
		{"explicit defaults", func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{RunAsNonRoot: new(false)}
			p.Spec.HostUsers = new(true)
			p.Spec.ShareProcessNamespace = new(false)
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{
				Privileged: new(false), AllowPrivilegeEscalation: new(true),
				ReadOnlyRootFilesystem: new(false), RunAsNonRoot: new(false),
				ProcMount: new(v1.DefaultProcMount),
			}
		}, nil, nil},
		{"the pod of issue 20", func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{RunAsNonRoot: new(true), RunAsUser: new(int64(65534))}
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{
				Capabilities:             &v1.Capabilities{Drop: []v1.Capability{"ALL"}},
				AllowPrivilegeEscalation: new(false),
				ReadOnlyRootFilesystem:   new(true),
			}
		},
			[]string{"spec.securityContext.runAsUser", "spec.securityContext.runAsNonRoot"},
			[]string{"spec.containers[0].securityContext.capabilities", "spec.containers[0].securityContext.readOnlyRootFilesystem", "spec.containers[0].securityContext.allowPrivilegeEscalation"}},
		{"pod fields", func(p *v1.Pod) {
			p.Spec.RuntimeClassName = new("gvisor")
			p.Spec.HostUsers = new(false)
			p.Spec.HostPID, p.Spec.HostIPC = true, true
			p.Spec.ShareProcessNamespace = new(true)
		}, []string{"spec.runtimeClassName", "spec.hostUsers", "spec.hostPID", "spec.hostIPC", "spec.shareProcessNamespace"}, nil},
		{"seccomp and sysctls", func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{
				SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
				Sysctls:        []v1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}},
			}
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Privileged: new(true), ProcMount: new(v1.UnmaskedProcMount)}
		},
			[]string{"spec.securityContext.sysctls", "spec.securityContext.seccompProfile"},
			[]string{"spec.containers[0].securityContext.privileged", "spec.containers[0].securityContext.procMount"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
			tc.edit(pod)
			if got := unappliedPodIsolation(pod); !slices.Equal(got, tc.pod) {
				t.Errorf("pod fields %q, want %q", got, tc.pod)
			}
			if got := unappliedContainerIsolation(pod, &pod.Spec.Containers[0]); !slices.Equal(got, tc.ctr) {
				t.Errorf("container fields %q, want %q", got, tc.ctr)
			}
		})
	}
}

// A pod asking for isolation podlife does not apply gets no sandbox; a
// container asking for it is not created, and its sibling runs. Both wait
// in CreateContainerConfigError with a Failed event naming the fields.
func TestSyncPodRefusesUnappliedIsolation(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("runtimeclass", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	pod.Spec.InitContainers = []v1.Container{{Name: "init", Image: "img"}}
	pod.Spec.RuntimeClassName = new("kata")
	if _, err := h.syncPod(pod); err == nil || !strings.Contains(err.Error(), "spec.runtimeClassName") {
		t.Fatalf("SyncPod error %v, want the refusal of spec.runtimeClassName", err)
	}
	if n := h.calls("RunPodSandbox"); n != 0 {
		t.Errorf("RunPodSandbox called %d times, want none", n)
	}
	st := h.statuses.last(t, pod.UID)
	for _, cs := range append(st.InitContainerStatuses, st.ContainerStatuses...) {
		if w := cs.State.Waiting; w == nil || w.Reason != "CreateContainerConfigError" || !strings.Contains(w.Message, "spec.runtimeClassName") {
			t.Errorf("container %s state %+v, want waiting in CreateContainerConfigError", cs.Name, cs.State)
		}
	}
	if msgs := h.events.Messages(pod.UID, "Failed"); len(msgs) != 1 || !strings.Contains(msgs[0], "less isolation") {
		t.Errorf("Failed events %q", msgs)
	}

	pod = crifake.MakePod("nonroot", v1.RestartPolicyAlways, crifake.Ctr{Name: "plain"}, crifake.Ctr{Name: "nonroot"})
	pod.Spec.Containers[1].SecurityContext = &v1.SecurityContext{RunAsUser: new(int64(65534))}
	if _, err := h.syncPod(pod); err == nil || !strings.Contains(err.Error(), "spec.containers[1].securityContext.runAsUser") {
		t.Fatalf("SyncPod error %v", err)
	}
	if n := h.calls("CreateContainer"); n != 1 {
		t.Errorf("CreateContainer called %d times, want once (plain)", n)
	}
	st = h.statuses.last(t, pod.UID)
	for _, cs := range st.ContainerStatuses {
		refused := cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerConfigError"
		if refused != (cs.Name == "nonroot") {
			t.Errorf("container %s state %+v", cs.Name, cs.State)
		}
	}
}
