package securitycontext

import (
	"reflect"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestUnapplied(t *testing.T) {
	for _, tc := range []struct {
		name string
		ptr  any
		want []string
	}{
		{"nil pod context", (*v1.PodSecurityContext)(nil), nil},
		{"nil container context", (*v1.SecurityContext)(nil), nil},
		{"applied pod fields", &v1.PodSecurityContext{RunAsUser: new(int64(1)), Sysctls: []v1.Sysctl{{Name: "a", Value: "b"}}, FSGroup: new(int64(1))}, nil},
		{"seLinuxChangePolicy", &v1.PodSecurityContext{SELinuxChangePolicy: new(v1.SELinuxChangePolicyMountOption)}, []string{"x.seLinuxChangePolicy"}},
		{"applied container fields", &v1.SecurityContext{Privileged: new(true), ProcMount: new(v1.UnmaskedProcMount)}, nil},
	} {
		if got := Unapplied("x", tc.ptr); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Unapplied = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Every field of the two API types is either applied or refused: a field
// a new k8s.io/api adds shows up here, refused, until it is looked at.
func TestEveryFieldIsAppliedOrRefused(t *testing.T) {
	refusedPod := []string{"seLinuxChangePolicy"}
	for _, tc := range []struct {
		typ     reflect.Type
		applied map[string]bool
		refused []string
	}{
		{reflect.TypeFor[v1.PodSecurityContext](), appliedPodFields, refusedPod},
		{reflect.TypeFor[v1.SecurityContext](), appliedContainerFields, nil},
	} {
		var names []string
		for i := range tc.typ.NumField() {
			name := jsonName(tc.typ.Field(i))
			names = append(names, name)
			if !tc.applied[name] && !slices.Contains(tc.refused, name) {
				t.Errorf("%s.%s is neither applied nor known to be refused: decide", tc.typ.Name(), name)
			}
		}
		for name := range tc.applied {
			if !slices.Contains(names, name) {
				t.Errorf("%s has no field %s: the applied list names one the API dropped", tc.typ.Name(), name)
			}
		}
	}
}
