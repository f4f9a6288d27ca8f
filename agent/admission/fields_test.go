package admission

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestPodFields(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*v1.Pod)
		message string // "" admits
	}{
		{name: "a plain pod", mutate: func(*v1.Pod) {}},
		{name: "a refused field", mutate: func(p *v1.Pod) { p.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "registry"}} },
			message: "spec.imagePullSecrets: podlife pulls images without credentials"},
		{name: "a host port", mutate: func(p *v1.Pod) { p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 80}} },
			message: "spec.containers[0].ports[0].hostPort: podlife maps no host ports"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := podOf("p", ctr("", ""))
			tt.mutate(p)
			got := PodFields().Admit(p, nil)
			if tt.message == "" {
				if !got.Admit {
					t.Errorf("rejected: %+v", got)
				}
				return
			}
			if got.Admit || got.Reason != "UnsupportedPodField" || !strings.Contains(got.Message, tt.message) {
				t.Errorf("Admit = %+v, want UnsupportedPodField with %q", got, tt.message)
			}
		})
	}
}
