package admission

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/podlife/podlife/cri/securitycontext"
)

func sysctlPod(edit func(*v1.PodSpec), sysctls ...string) *v1.Pod {
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}, SecurityContext: &v1.PodSecurityContext{}}}
	for _, s := range sysctls {
		pod.Spec.SecurityContext.Sysctls = append(pod.Spec.SecurityContext.Sysctls, v1.Sysctl{Name: s, Value: "1"})
	}
	if edit != nil {
		edit(&pod.Spec)
	}
	return pod
}

func TestSafeSysctls(t *testing.T) {
	old := SafeSysctls(version.MustParseGeneric("4.4"))
	if slices.Contains(old, "net.ipv4.tcp_keepalive_time") || !slices.Contains(old, "net.ipv4.ip_local_reserved_ports") {
		t.Errorf("kernel 4.4: %v", old)
	}
	if got := SafeSysctls(version.MustParseGeneric("6.1.0-13-amd64")); len(got) != len(safeSysctls) {
		t.Errorf("kernel 6.1: %d safe sysctls, want all %d", len(got), len(safeSysctls))
	}
	if got := SafeSysctls(nil); slices.Contains(got, "net.ipv4.tcp_rmem") || !slices.Contains(got, "kernel.shm_rmid_forced") {
		t.Errorf("unknown kernel: %v", got)
	}
}

func TestSysctlAdmitter(t *testing.T) {
	safe := SafeSysctls(version.MustParseGeneric("6.1"))
	for _, tc := range []struct {
		name    string
		unsafe  []string
		pod     *v1.Pod
		wantMsg string // "" admits
	}{
		{"no sysctls", nil, sysctlPod(nil), ""},
		{"no security context", nil, &v1.Pod{}, ""},
		{"safe", nil, sysctlPod(nil, "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range"), ""},
		{"safe, slash separated", nil, sysctlPod(nil, "net/ipv4/ip_unprivileged_port_start"), ""},
		{"unsafe, not allowed", nil, sysctlPod(nil, "kernel.msgmax"), `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{"unsafe, allowed by a pattern", []string{"kernel.msg*"}, sysctlPod(nil, "kernel.msgmax"), ""},
		{"unsafe, allowed by name", []string{"net.core.somaxconn"}, sysctlPod(nil, "net.core.somaxconn"), ""},
		{"net sysctl with hostNetwork", nil, sysctlPod(func(s *v1.PodSpec) { s.HostNetwork = true }, "net.ipv4.tcp_syncookies"),
			`forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host Net enabled`},
		{"IPC sysctl with hostIPC", []string{"kernel.msg*"}, sysctlPod(func(s *v1.PodSpec) { s.HostIPC = true }, "kernel.msgmax"),
			`forbidden sysctl: "kernel.msgmax" not allowed with host IPC enabled`},
		{"IPC sysctl with hostNetwork", []string{"kernel.msg*"}, sysctlPod(func(s *v1.PodSpec) { s.HostNetwork = true }, "kernel.msgmax"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewSysctlAdmitter(append(slices.Clone(safe), tc.unsafe...))
			if err != nil {
				t.Fatal(err)
			}
			r := a.Admit(tc.pod, nil)
			if r.Admit != (tc.wantMsg == "") || !r.Admit && (r.Reason != "SysctlForbidden" || r.Message != tc.wantMsg) {
				t.Errorf("Admit = %+v, want message %q", r, tc.wantMsg)
			}
		})
	}
}

func TestSysctlAdmitterPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern, wantErr string
	}{
		{"kernel.msg*", ""},
		{"net.*", ""},
		{"fs.mqueue.*", ""},
		{"kernel.shm_rmid_forced", ""},
		{"kernel.*", `the sysctls "kernel." are not known to be namespaced`},
		{"vm.swappiness", `the sysctls "vm.swappiness" are not known to be namespaced`},
		{"Net.Core", `sysctl "Net.Core" must have at most 253 characters and match regex`},
		{"net.*.foo", `sysctl "net.*.foo" must have at most 253 characters`},
	} {
		_, err := NewSysctlAdmitter([]string{tc.pattern})
		if (err == nil) != (tc.wantErr == "") || err != nil && !strings.HasPrefix(err.Error(), tc.wantErr) {
			t.Errorf("%s: %v, want %q", tc.pattern, err, tc.wantErr)
		}
	}
}

func TestAppArmorAdmitter(t *testing.T) {
	pod := func(edit func(*v1.Pod)) *v1.Pod {
		p := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}
		edit(p)
		return p
	}
	runtimeDefault := func(p *v1.Pod) {
		p.Spec.SecurityContext = &v1.PodSecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}}
	}
	emptyLocal := func(p *v1.Pod) {
		p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: new(" ")}}
	}
	for _, tc := range []struct {
		name    string
		enabled bool
		pod     *v1.Pod
		wantMsg string
	}{
		{"none asked, no AppArmor", false, pod(func(*v1.Pod) {}), ""},
		{"Unconfined, no AppArmor", false, pod(func(p *v1.Pod) {
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}}
		}), ""},
		{"RuntimeDefault, no AppArmor", false, pod(runtimeDefault), "Cannot enforce AppArmor: AppArmor is not enabled on the host"},
		{"annotation, no AppArmor", false, pod(func(p *v1.Pod) {
			p.Annotations = map[string]string{v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "c": "runtime/default"}
		}), "Cannot enforce AppArmor: AppArmor is not enabled on the host"},
		{"running pod, not checked again", false, pod(func(p *v1.Pod) { runtimeDefault(p); p.Status.Phase = v1.PodRunning }), ""},
		{"RuntimeDefault, AppArmor", true, pod(runtimeDefault), ""},
		{"empty Localhost name, AppArmor", true, pod(emptyLocal), "Cannot enforce AppArmor: invalid empty AppArmor profile name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewAppArmorAdmitter(tc.enabled).Admit(tc.pod, nil)
			if r.Admit != (tc.wantMsg == "") || !r.Admit && (r.Reason != "AppArmor" || !strings.HasPrefix(r.Message, tc.wantMsg)) {
				t.Errorf("Admit = %+v, want %q", r, tc.wantMsg)
			}
		})
	}
}

func TestGroupsPolicyAdmitter(t *testing.T) {
	strict := &v1.Pod{Spec: v1.PodSpec{SecurityContext: &v1.PodSecurityContext{SupplementalGroupsPolicy: new(v1.SupplementalGroupsPolicyStrict)}}}
	merge := &v1.Pod{Spec: v1.PodSpec{SecurityContext: &v1.PodSecurityContext{SupplementalGroupsPolicy: new(v1.SupplementalGroupsPolicyMerge)}}}
	old := NewGroupsPolicyAdmitter(securitycontext.RuntimeFeatures{})
	if r := old.Admit(strict, nil); r.Admit || r.Reason != "SupplementalGroupsPolicyNotSupported" || r.Message != "SupplementalGroupsPolicy=Strict is not supported in this node" {
		t.Errorf("Strict on an old runtime: %+v", r)
	}
	if r := old.Admit(merge, nil); !r.Admit {
		t.Errorf("Merge on an old runtime: %+v", r)
	}
	if r := NewGroupsPolicyAdmitter(securitycontext.RuntimeFeatures{SupplementalGroupsPolicy: true}).Admit(strict, nil); !r.Admit {
		t.Errorf("Strict on a runtime with the feature: %+v", r)
	}
}
