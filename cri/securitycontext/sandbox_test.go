package securitycontext

import (
	"maps"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestNamespaces(t *testing.T) {
	const pod, node, ctr = runtimeapi.NamespaceMode_POD, runtimeapi.NamespaceMode_NODE, runtimeapi.NamespaceMode_CONTAINER
	for _, tc := range []struct {
		name                    string
		edit                    func(*v1.PodSpec)
		wantNet, wantPid, wantI runtimeapi.NamespaceMode
	}{
		{"default: a PID namespace per container", func(*v1.PodSpec) {}, pod, ctr, pod},
		{"hostNetwork", func(s *v1.PodSpec) { s.HostNetwork = true }, node, ctr, pod},
		{"hostIPC", func(s *v1.PodSpec) { s.HostIPC = true }, pod, ctr, node},
		{"shareProcessNamespace", func(s *v1.PodSpec) { s.ShareProcessNamespace = new(true) }, pod, pod, pod},
		{"hostPID wins over shareProcessNamespace", func(s *v1.PodSpec) { s.HostPID = true; s.ShareProcessNamespace = new(true) }, pod, node, pod},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPod(nil, nil)
			tc.edit(&p.Spec)
			ns := Namespaces(p)
			if ns.Network != tc.wantNet || ns.Pid != tc.wantPid || ns.Ipc != tc.wantI {
				t.Errorf("Namespaces = %v", ns)
			}
		})
	}
}

func TestSandbox(t *testing.T) {
	p := testPod(&v1.PodSecurityContext{
		RunAsUser: new(int64(1000)), RunAsGroup: new(int64(3000)), FSGroup: new(int64(2000)), SupplementalGroups: []int64{4000},
		SELinuxOptions: &v1.SELinuxOptions{Level: "s0:c1"},
		Sysctls:        []v1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}, {Name: "net/ipv4/ip_unprivileged_port_start", Value: "0"}},
	}, nil)
	p.Spec.InitContainers = []v1.Container{{Name: "i", SecurityContext: &v1.SecurityContext{Privileged: new(true)}}}
	sc, err := Sandbox(p)
	if err != nil {
		t.Fatal(err)
	}
	if sc.RunAsUser.GetValue() != 1000 || sc.RunAsGroup.GetValue() != 3000 || !slices.Equal(sc.SupplementalGroups, []int64{2000, 4000}) ||
		!sc.Privileged || sc.ReadonlyRootfs || sc.SelinuxOptions.GetLevel() != "s0:c1" ||
		sc.Seccomp.GetProfileType() != runtimeapi.SecurityProfile_RuntimeDefault {
		t.Errorf("Sandbox = %v", sc)
	}
	want := map[string]string{"kernel.shm_rmid_forced": "1", "net.ipv4.ip_unprivileged_port_start": "0"}
	if got := Sysctls(p); !maps.Equal(got, want) {
		t.Errorf("Sysctls = %v, want %v", got, want)
	}
	if sc, err := Sandbox(testPod(nil, nil)); err != nil || sc.Privileged || sc.RunAsUser != nil || Sysctls(testPod(nil, nil)) != nil {
		t.Errorf("an empty pod's sandbox: %v, %v", sc, err)
	}
}

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string][]int{"0": {0}, "0-3\n": {0, 1, 2, 3}, "0-1,4": {0, 1, 4}, "x": nil, "3-1": nil} {
		got, ok := parseCPUList(in)
		if ok != (want != nil) || !slices.Equal(got, want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
}
