package kuberuntime

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri/securitycontext"
	"github.com/podlife/podlife/internal/crifake"
)

// runtimeClasses is a RuntimeClassGetter over a map.
type runtimeClasses map[string]string

func (r runtimeClasses) RuntimeHandler(_ context.Context, name string) (string, error) {
	if h, ok := r[name]; ok {
		return h, nil
	}
	return "", apierrors.NewNotFound(schema.GroupResource{Group: "node.k8s.io", Resource: "runtimeclass"}, name)
}

// The pod-wide refusals: what the runtime or the node cannot do is
// refused before a sandbox is made, every container waiting in
// CreateContainerConfigError with the reason.
func TestPodRefusal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		edit    func(*v1.Pod)
		refused string // "" when the pod runs
	}{
		{"nothing asked", Options{}, func(*v1.Pod) {}, ""},
		{"every applied pod field", Options{}, func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{
				RunAsUser: new(int64(1000)), RunAsGroup: new(int64(1000)), RunAsNonRoot: new(true),
				SupplementalGroups: []int64{5}, FSGroup: new(int64(7)),
				SupplementalGroupsPolicy: new(v1.SupplementalGroupsPolicyMerge),
				Sysctls:                  []v1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}},
				SeccompProfile:           &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
				SELinuxOptions:           &v1.SELinuxOptions{Level: "s0:c1,c2"},
				WindowsOptions:           &v1.WindowsSecurityContextOptions{RunAsUserName: new("x")},
			}
			p.Spec.HostPID, p.Spec.HostIPC = true, true
			p.Spec.HostUsers = new(true)
		}, ""},
		{"seLinuxChangePolicy", Options{}, func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{SELinuxChangePolicy: new(v1.SELinuxChangePolicyRecursive)}
		}, "spec.securityContext.seLinuxChangePolicy: podlife does not apply"},
		{"runtime class, standalone", Options{}, func(p *v1.Pod) { p.Spec.RuntimeClassName = new("kata") },
			`spec.runtimeClassName: RuntimeClass "kata" cannot be looked up`},
		{"runtime class, cluster", Options{RuntimeClasses: runtimeClasses{}}, func(p *v1.Pod) { p.Spec.RuntimeClassName = new("kata") }, ""},
		{"hostUsers false, runtime without user namespaces", Options{}, func(p *v1.Pod) { p.Spec.HostUsers = new(false) },
			"can't set `spec.hostUsers: false`, runtime does not support user namespaces"},
		{"hostUsers false, runtime with user namespaces", Options{RuntimeFeatures: securitycontext.RuntimeFeatures{UserNamespaces: map[string]bool{"": true}}},
			func(p *v1.Pod) { p.Spec.HostUsers = new(false) }, "does not allocate the user namespace ID mappings"},
		{"Strict groups, runtime without the feature", Options{}, func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{SupplementalGroupsPolicy: new(v1.SupplementalGroupsPolicyStrict)}
		}, "SupplementalGroupsPolicy=Strict is not supported in this node"},
		{"Strict groups, runtime with the feature", Options{RuntimeFeatures: securitycontext.RuntimeFeatures{SupplementalGroupsPolicy: true}}, func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{SupplementalGroupsPolicy: new(v1.SupplementalGroupsPolicyStrict)}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSyncer(nil, nil, tc.opts)
			pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
			tc.edit(pod)
			err := s.podRefusal(pod)
			if (err == nil) != (tc.refused == "") || err != nil && !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("podRefusal = %v, want %q", err, tc.refused)
			}
		})
	}
}

// A pod refused for its own spec gets no sandbox; every container waits
// in CreateContainerConfigError, with one Failed event.
func TestSyncPodRefusesPod(t *testing.T) {
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
	if msgs := h.events.Messages(pod.UID, "Failed"); len(msgs) != 1 || !strings.Contains(msgs[0], "standalone") {
		t.Errorf("Failed events %q", msgs)
	}
}

// The runtime class's handler is the sandbox's; a class that does not
// exist fails the sandbox's creation with the API's NotFound, in a
// FailedCreatePodSandBox event, as the kubelet's does.
func TestSyncPodRuntimeClass(t *testing.T) {
	h := newHarness(t, Options{RuntimeClasses: runtimeClasses{"fast": "runsc"}}, "img")
	pod := crifake.MakePod("fast", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	pod.Spec.RuntimeClassName = new("fast")
	h.mustSync(pod)
	for _, sb := range h.fake.Sandboxes {
		if sb.RuntimeHandler != "runsc" {
			t.Errorf("sandbox %s has runtime handler %q, want runsc", sb.Id, sb.RuntimeHandler)
		}
	}
	missing := crifake.MakePod("missing", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	missing.Spec.RuntimeClassName = new("nope")
	if _, err := h.syncPod(missing); !apierrors.IsNotFound(err) {
		t.Fatalf("SyncPod error %v, want NotFound", err)
	}
	msgs := h.events.Messages(missing.UID, "FailedCreatePodSandBox")
	if len(msgs) != 1 || msgs[0] != `Failed to create pod sandbox: runtimeclass.node.k8s.io "nope" not found` {
		t.Errorf("FailedCreatePodSandBox events %q", msgs)
	}
}

// The issue's pod: the security contexts reach the runtime, the sandbox's
// and the container's, and runAsNonRoot is checked against the image's
// user (the fake's images name none: root).
func TestSyncPodSecurityContexts(t *testing.T) {
	var created []*runtimeapi.ContainerConfig
	h := newHarness(t, Options{Security: securitycontext.Options{SeccompProfileRoot: "/root/seccomp"}}, "img")
	h.rt.OnCreate = func(_ context.Context, _ string, cfg *runtimeapi.ContainerConfig) error {
		created = append(created, cfg)
		return nil
	}
	issuePod := func(name string, runAsUser *int64) *v1.Pod {
		pod := crifake.MakePod(name, v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
		pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsNonRoot: new(true), RunAsUser: runAsUser, FSGroup: new(int64(2000)),
			Sysctls: []v1.Sysctl{{Name: "net/ipv4/ip_unprivileged_port_start", Value: "0"}}}
		pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{
			Capabilities:             &v1.Capabilities{Drop: []v1.Capability{"ALL"}},
			AllowPrivilegeEscalation: new(false),
			ReadOnlyRootFilesystem:   new(true),
		}
		return pod
	}
	pod := issuePod("nonroot", new(int64(65534)))
	h.mustSync(pod)
	if len(created) != 1 {
		t.Fatalf("%d containers created, want 1", len(created))
	}
	sc := created[0].GetLinux().GetSecurityContext()
	if sc.GetRunAsUser().GetValue() != 65534 || !sc.NoNewPrivs || !sc.ReadonlyRootfs ||
		strings.Join(sc.GetCapabilities().GetDropCapabilities(), ",") != "ALL" ||
		sc.GetSeccomp().GetProfileType() != runtimeapi.SecurityProfile_Unconfined ||
		len(sc.SupplementalGroups) != 1 || sc.SupplementalGroups[0] != 2000 {
		t.Errorf("container security context %v", sc)
	}
	for _, sb := range h.fake.Sandboxes {
		if sb.Linux.Namespaces.Options.Pid != runtimeapi.NamespaceMode_CONTAINER {
			t.Errorf("sandbox namespaces %v", sb.Linux.Namespaces.Options)
		}
	}

	root := issuePod("root", nil)
	_, err := h.syncPod(root)
	want := `container has runAsNonRoot and image will run as root (pod: "root_ns(uid-root)", container: app)`
	if err == nil || err.Error() != want {
		t.Fatalf("SyncPod error %v, want %q", err, want)
	}
	st := h.statuses.last(t, root.UID)
	if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "CreateContainerConfigError" || w.Message != want {
		t.Errorf("state %+v", st.ContainerStatuses[0].State)
	}
	if msgs := h.events.Messages(root.UID, "Failed"); len(msgs) != 1 || msgs[0] != "Error: "+want {
		t.Errorf("Failed events %q", msgs)
	}
	if len(created) != 1 {
		t.Errorf("%d containers created, want the first pod's only", len(created))
	}
}
