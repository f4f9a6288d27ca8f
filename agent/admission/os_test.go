package admission

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestPodOS(t *testing.T) {
	tests := []struct {
		name   string
		label  string // the pod's kubernetes.io/os label; "" for none
		os     v1.OSName
		reason string // "" admits
	}{
		{name: "neither", reason: ""},
		{name: "os linux", os: v1.Linux},
		{name: "label linux", label: "linux"},
		{name: "both linux", label: "linux", os: v1.Linux},
		{name: "os windows", os: v1.Windows, reason: ReasonPodOSNotSupported},
		{name: "label windows", label: "windows", reason: ReasonPodOSSelectorNodeLabelDoesNotMatch},
		{name: "label checked first", label: "windows", os: v1.Windows, reason: ReasonPodOSSelectorNodeLabelDoesNotMatch},
		{name: "label linux, os windows", label: "linux", os: v1.Windows, reason: ReasonPodOSNotSupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := podOf("p")
			if tt.label != "" {
				p.Labels = map[string]string{v1.LabelOSStable: tt.label}
			}
			if tt.os != "" {
				p.Spec.OS = &v1.PodOS{Name: tt.os}
			}
			got := PodOS("linux").Admit(p, nil)
			if got.Admit != (tt.reason == "") || got.Reason != tt.reason {
				t.Fatalf("Admit = %+v, want reason %q", got, tt.reason)
			}
			want := map[string]string{
				ReasonPodOSNotSupported:                  "Failed to admit pod as the OS field doesn't match node OS",
				ReasonPodOSSelectorNodeLabelDoesNotMatch: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
			}[tt.reason]
			if got.Message != want {
				t.Errorf("message = %q, want the kubelet's %q", got.Message, want)
			}
		})
	}
}
