package securitycontext

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func testPod(psc *v1.PodSecurityContext, csc *v1.SecurityContext) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"},
		Spec: v1.PodSpec{
			SecurityContext: psc,
			Containers:      []v1.Container{{Name: "c", Image: "img", SecurityContext: csc}},
		},
	}
}

// The effective context: the pod gives user, group, runAsNonRoot and
// SELinux options; the container's own win; the rest is the container's.
func TestEffective(t *testing.T) {
	for _, tc := range []struct {
		name string
		psc  *v1.PodSecurityContext
		csc  *v1.SecurityContext
		want *v1.SecurityContext
	}{
		{"none", nil, nil, &v1.SecurityContext{}},
		{"pod only", &v1.PodSecurityContext{RunAsUser: new(int64(1)), RunAsGroup: new(int64(2)), RunAsNonRoot: new(true),
			SELinuxOptions: &v1.SELinuxOptions{Level: "s0"}, FSGroup: new(int64(9))},
			nil, &v1.SecurityContext{RunAsUser: new(int64(1)), RunAsGroup: new(int64(2)), RunAsNonRoot: new(true), SELinuxOptions: &v1.SELinuxOptions{Level: "s0"}}},
		{"container wins", &v1.PodSecurityContext{RunAsUser: new(int64(1)), RunAsGroup: new(int64(2)), RunAsNonRoot: new(true)},
			&v1.SecurityContext{RunAsUser: new(int64(3)), RunAsNonRoot: new(false), Privileged: new(true), ProcMount: new(v1.UnmaskedProcMount)},
			&v1.SecurityContext{RunAsUser: new(int64(3)), RunAsGroup: new(int64(2)), RunAsNonRoot: new(false), Privileged: new(true), ProcMount: new(v1.UnmaskedProcMount)}},
		{"container only", nil, &v1.SecurityContext{Capabilities: &v1.Capabilities{Add: []v1.Capability{"NET_ADMIN"}}, AllowPrivilegeEscalation: new(false)},
			&v1.SecurityContext{Capabilities: &v1.Capabilities{Add: []v1.Capability{"NET_ADMIN"}}, AllowPrivilegeEscalation: new(false)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(tc.psc, tc.csc)
			got := Effective(pod, &pod.Spec.Containers[0])
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Effective = %+v, want %+v", got, tc.want)
			}
			if tc.psc != nil && tc.psc.RunAsUser != nil && got.RunAsUser == tc.psc.RunAsUser {
				t.Error("the effective context aliases the pod's")
			}
		})
	}
}

// The container's CRI context, field by field.
func TestContainer(t *testing.T) {
	root := ImageUser{UID: new(int64(0))}
	opts := Options{SeccompProfileRoot: "/var/lib/podlife/seccomp"}
	for _, tc := range []struct {
		name  string
		psc   *v1.PodSecurityContext
		csc   *v1.SecurityContext
		img   ImageUser
		opts  Options
		check func(*testing.T, *runtimeapi.LinuxContainerSecurityContext)
	}{
		{"nothing set: the image's user, default paths, Unconfined", nil, nil, ImageUser{UID: new(int64(1234))}, opts, func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			if sc.RunAsUser.GetValue() != 1234 || sc.NoNewPrivs || sc.Privileged || sc.ReadonlyRootfs || sc.Capabilities != nil {
				t.Errorf("%v", sc)
			}
			if !slices.Contains(sc.MaskedPaths, "/proc/kcore") || !slices.Equal(sc.ReadonlyPaths, defaultReadonlyPaths) {
				t.Errorf("masked %v readonly %v", sc.MaskedPaths, sc.ReadonlyPaths)
			}
			//lint:ignore SA1019 the deprecated field is set for old runtimes
			oldAppArmor := sc.ApparmorProfile
			if sc.Seccomp.ProfileType != runtimeapi.SecurityProfile_Unconfined || sc.Apparmor != nil || oldAppArmor != "" {
				t.Errorf("seccomp %v apparmor %v %q", sc.Seccomp, sc.Apparmor, oldAppArmor)
			}
		}},
		{"image user name", nil, nil, ImageUser{Username: "nobody"}, opts, func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			if sc.RunAsUser != nil || sc.RunAsUsername != "nobody" {
				t.Errorf("%v", sc)
			}
		}},
		{"runAsUser wins over the image", &v1.PodSecurityContext{RunAsUser: new(int64(65534)), RunAsGroup: new(int64(3))}, nil, ImageUser{Username: "nobody"}, opts,
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.RunAsUser.GetValue() != 65534 || sc.RunAsUsername != "" || sc.RunAsGroup.GetValue() != 3 {
					t.Errorf("%v", sc)
				}
			}},
		{"capabilities as the API names them", nil, &v1.SecurityContext{Capabilities: &v1.Capabilities{Add: []v1.Capability{"NET_ADMIN", "SYS_TIME"}, Drop: []v1.Capability{"ALL"}}}, root, opts,
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if !slices.Equal(sc.Capabilities.AddCapabilities, []string{"NET_ADMIN", "SYS_TIME"}) || !slices.Equal(sc.Capabilities.DropCapabilities, []string{"ALL"}) {
					t.Errorf("%v", sc.Capabilities)
				}
			}},
		{"privileged, read-only root", nil, &v1.SecurityContext{Privileged: new(true), ReadOnlyRootFilesystem: new(true)}, root, opts,
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if !sc.Privileged || !sc.ReadonlyRootfs || sc.NoNewPrivs {
					t.Errorf("%v", sc)
				}
			}},
		{"unmasked /proc", nil, &v1.SecurityContext{ProcMount: new(v1.UnmaskedProcMount)}, root, opts, func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			if sc.MaskedPaths == nil || len(sc.MaskedPaths) != 0 || sc.ReadonlyPaths == nil || len(sc.ReadonlyPaths) != 0 {
				t.Errorf("masked %v readonly %v: want empty, not nil (nil is the runtime's defaults)", sc.MaskedPaths, sc.ReadonlyPaths)
			}
		}},
		{"groups: fsGroup first, policy", &v1.PodSecurityContext{FSGroup: new(int64(7)), SupplementalGroups: []int64{5, 6}, SupplementalGroupsPolicy: new(v1.SupplementalGroupsPolicyStrict)}, nil, root, opts,
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if !slices.Equal(sc.SupplementalGroups, []int64{7, 5, 6}) || sc.SupplementalGroupsPolicy != runtimeapi.SupplementalGroupsPolicy_Strict {
					t.Errorf("%v %v", sc.SupplementalGroups, sc.SupplementalGroupsPolicy)
				}
			}},
		{"SELinux from the pod", &v1.PodSecurityContext{SELinuxOptions: &v1.SELinuxOptions{User: "u", Role: "r", Type: "t", Level: "s0:c1"}}, nil, root, opts,
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if o := sc.SelinuxOptions; o.GetUser() != "u" || o.GetRole() != "r" || o.GetType() != "t" || o.GetLevel() != "s0:c1" {
					t.Errorf("%v", o)
				}
			}},
		{"namespaces: shareProcessNamespace", nil, nil, root, opts, func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			if sc.NamespaceOptions.Pid != runtimeapi.NamespaceMode_CONTAINER {
				t.Errorf("%v", sc.NamespaceOptions)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(tc.psc, tc.csc)
			sc, err := Container(pod, &pod.Spec.Containers[0], tc.img, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, sc)
		})
	}
}

// no_new_privs is set exactly when allowPrivilegeEscalation is false.
func TestNoNewPrivileges(t *testing.T) {
	for _, tc := range []struct {
		ape  *bool
		want bool
	}{{nil, false}, {new(true), false}, {new(false), true}} {
		if got := NoNewPrivileges(&v1.SecurityContext{AllowPrivilegeEscalation: tc.ape}); got != tc.want {
			t.Errorf("allowPrivilegeEscalation %v: no_new_privs %v, want %v", tc.ape, got, tc.want)
		}
	}
}

func TestSeccomp(t *testing.T) {
	local := func(p string) *v1.SeccompProfile {
		return &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: &p}
	}
	for _, tc := range []struct {
		name     string
		pod, ctr *v1.SeccompProfile
		def      bool
		want     runtimeapi.SecurityProfile_ProfileType
		wantRef  string
		wantErr  string
	}{
		{"unset", nil, nil, false, runtimeapi.SecurityProfile_Unconfined, "", ""},
		{"unset with --seccomp-default", nil, nil, true, runtimeapi.SecurityProfile_RuntimeDefault, "", ""},
		{"pod RuntimeDefault", &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}, nil, false, runtimeapi.SecurityProfile_RuntimeDefault, "", ""},
		{"container Unconfined wins over --seccomp-default", nil, &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}, true, runtimeapi.SecurityProfile_Unconfined, "", ""},
		{"container wins over pod", &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}, local("profiles/audit.json"), false,
			runtimeapi.SecurityProfile_Localhost, "/var/lib/podlife/seccomp/profiles/audit.json", ""},
		{"Localhost without a name", local(""), nil, false, 0, "", "localhostProfile must be set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(&v1.PodSecurityContext{SeccompProfile: tc.pod}, &v1.SecurityContext{SeccompProfile: tc.ctr})
			got, err := Seccomp(pod, &pod.Spec.Containers[0], Options{SeccompProfileRoot: "/var/lib/podlife/seccomp", SeccompDefault: tc.def})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got.ProfileType != tc.want || got.LocalhostRef != tc.wantRef {
				t.Errorf("Seccomp = %v, %v; want %v %q", got, err, tc.want, tc.wantRef)
			}
		})
	}
}

func TestAppArmor(t *testing.T) {
	prof := func(typ v1.AppArmorProfileType) *v1.AppArmorProfile { return &v1.AppArmorProfile{Type: typ} }
	for _, tc := range []struct {
		name        string
		pod, ctr    *v1.AppArmorProfile
		annotation  string
		wantType    runtimeapi.SecurityProfile_ProfileType
		wantDeprec  string
		wantNone    bool
		wantRequire bool
	}{
		{name: "none", wantNone: true},
		{name: "pod Unconfined", pod: prof(v1.AppArmorProfileTypeUnconfined), wantType: runtimeapi.SecurityProfile_Unconfined, wantDeprec: "unconfined"},
		{name: "container RuntimeDefault", ctr: prof(v1.AppArmorProfileTypeRuntimeDefault), wantType: runtimeapi.SecurityProfile_RuntimeDefault, wantDeprec: "runtime/default", wantRequire: true},
		{name: "annotation before the pod's field", pod: prof(v1.AppArmorProfileTypeRuntimeDefault), annotation: "localhost/k8s-deny-write",
			wantType: runtimeapi.SecurityProfile_Localhost, wantDeprec: "localhost/k8s-deny-write", wantRequire: true},
		{name: "annotation unconfined", annotation: "unconfined", wantType: runtimeapi.SecurityProfile_Unconfined, wantDeprec: "unconfined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(&v1.PodSecurityContext{AppArmorProfile: tc.pod}, &v1.SecurityContext{AppArmorProfile: tc.ctr})
			if tc.annotation != "" {
				pod.Annotations = map[string]string{v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "c": tc.annotation}
			}
			sp, deprecated, err := appArmor(pod, &pod.Spec.Containers[0])
			switch {
			case err != nil:
				t.Fatal(err)
			case tc.wantNone && (sp != nil || deprecated != ""):
				t.Errorf("profile %v %q, want none", sp, deprecated)
			case !tc.wantNone && (sp.GetProfileType() != tc.wantType || deprecated != tc.wantDeprec):
				t.Errorf("profile %v %q, want %v %q", sp, deprecated, tc.wantType, tc.wantDeprec)
			}
			if got := AppArmorRequired(pod); got != tc.wantRequire {
				t.Errorf("AppArmorRequired = %v, want %v", got, tc.wantRequire)
			}
		})
	}
}

// runAsNonRoot against the image's user, with the kubelet's messages.
func TestVerifyRunAsNonRoot(t *testing.T) {
	const desc = `"p_ns(u1)"`
	for _, tc := range []struct {
		name    string
		psc     *v1.PodSecurityContext
		csc     *v1.SecurityContext
		img     ImageUser
		wantErr string
	}{
		{"not asked", nil, nil, ImageUser{UID: new(int64(0))}, ""},
		{"asked false", &v1.PodSecurityContext{RunAsNonRoot: new(false)}, nil, ImageUser{UID: new(int64(0))}, ""},
		{"runAsUser 0", &v1.PodSecurityContext{RunAsNonRoot: new(true)}, &v1.SecurityContext{RunAsUser: new(int64(0))}, ImageUser{UID: new(int64(1000))},
			"container's runAsUser breaks non-root policy (pod: " + desc + ", container: c)"},
		{"runAsUser non-root over a root image", nil, &v1.SecurityContext{RunAsNonRoot: new(true), RunAsUser: new(int64(1000))}, ImageUser{UID: new(int64(0))}, ""},
		{"root image", nil, &v1.SecurityContext{RunAsNonRoot: new(true)}, ImageUser{UID: new(int64(0))},
			"container has runAsNonRoot and image will run as root (pod: " + desc + ", container: c)"},
		{"image naming no user", nil, &v1.SecurityContext{RunAsNonRoot: new(true)}, ImageUserOf(&runtimeapi.Image{}),
			"container has runAsNonRoot and image will run as root (pod: " + desc + ", container: c)"},
		{"non-numeric image user", &v1.PodSecurityContext{RunAsNonRoot: new(true)}, nil, ImageUser{Username: "nobody"},
			"container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root (pod: " + desc + ", container: c)"},
		{"non-root image", &v1.PodSecurityContext{RunAsNonRoot: new(true)}, nil, ImageUserOf(&runtimeapi.Image{Uid: &runtimeapi.Int64Value{Value: 1234}}), ""},
		{"invalid image uid", &v1.PodSecurityContext{RunAsNonRoot: new(true)}, nil, ImageUser{UID: new(int64(1 << 40))},
			"container has runAsNonRoot and image has an invalid user id (1099511627776). (Must be 1-(2147483647))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(tc.psc, tc.csc)
			err := VerifyRunAsNonRoot(pod, &pod.Spec.Containers[0], tc.img)
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("VerifyRunAsNonRoot = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
