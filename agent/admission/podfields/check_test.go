package podfields

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func pod(mutate func(*v1.PodSpec)) *v1.Pod {
	p := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init", Image: "busybox"}},
		Containers:     []v1.Container{{Name: "app", Image: "busybox"}, {Name: "side", Image: "busybox"}},
	}}
	mutate(&p.Spec)
	return p
}

// Refusals come in the API types' field order, with indices.
func TestRefusals(t *testing.T) {
	limit := func(name v1.ResourceName) v1.ResourceList { return v1.ResourceList{name: resource.MustParse("1Gi")} }
	tests := []struct {
		name   string
		mutate func(*v1.PodSpec)
		want   []string // paths
	}{
		{name: "a plain pod", mutate: func(*v1.PodSpec) {}},
		{name: "honoured and meaningless fields", mutate: func(s *v1.PodSpec) {
			s.NodeName, s.Hostname, s.HostNetwork = "node", "h", true
			s.Tolerations = []v1.Toleration{{Key: "k"}}
			s.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
			s.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
			s.Containers[0].Resources = v1.ResourceRequirements{Limits: limit(v1.ResourceMemory), Requests: limit(v1.ResourceEphemeralStorage)}
		}},
		{name: "explicit defaults and empty values ask for nothing", mutate: func(s *v1.PodSpec) {
			s.DNSPolicy = v1.DNSClusterFirst
			s.ImagePullSecrets = []v1.LocalObjectReference{}
			s.Resources = &v1.ResourceRequirements{}
			s.Containers[1].VolumeDevices = []v1.VolumeDevice{}
			s.Containers[1].VolumeMounts = []v1.VolumeMount{{Name: "v", MountPath: "/v", BindMountOptions: []string{}}}
		}},
		{name: "a refused pod field", mutate: func(s *v1.PodSpec) { s.ImagePullSecrets = []v1.LocalObjectReference{{Name: "registry"}} },
			want: []string{"spec.imagePullSecrets"}},
		{name: "a refused value", mutate: func(s *v1.PodSpec) {
			s.Containers[0].Resources.Requests = limit("hugepages-1Gi")
		}, want: []string{"spec.containers[0].resources.requests"}},
		{name: "refused container fields, with their indices", mutate: func(s *v1.PodSpec) {
			s.InitContainers[0].Resources.Limits = limit("hugepages-2Mi")
			s.Containers[1].VolumeDevices = []v1.VolumeDevice{{Name: "b", DevicePath: "/dev/b"}}
			s.Containers[1].VolumeMounts = []v1.VolumeMount{{Name: "a", MountPath: "/a"}, {Name: "v", MountPath: "/v", ReadOnly: true}}
		}, want: []string{"spec.initContainers[0].resources.limits", "spec.containers[1].volumeDevices"}},
		{name: "a local storage limit, not its request", mutate: func(s *v1.PodSpec) {
			s.Containers[0].Resources = v1.ResourceRequirements{Limits: limit(v1.ResourceEphemeralStorage), Requests: limit(v1.ResourceEphemeralStorage)}
		}, want: []string{"spec.containers[0].resources.limits"}},
		{name: "a host port", mutate: func(s *v1.PodSpec) {
			s.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80}, {ContainerPort: 8080, HostPort: 8080, HostIP: "127.0.0.1"}}
		}, want: []string{"spec.containers[0].ports[1].hostPort", "spec.containers[0].ports[1].hostIP"}},
		{name: "a host port on the host network", mutate: func(s *v1.PodSpec) {
			s.HostNetwork = true
			s.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 8080, HostPort: 8080}}
		}},
		{name: "an ephemeral container", mutate: func(s *v1.PodSpec) {
			s.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{
				Name: "debug", VolumeDevices: []v1.VolumeDevice{{Name: "b", DevicePath: "/dev/b"}}}, TargetContainerName: "app"}}
		}, want: []string{"spec.ephemeralContainers[0].volumeDevices"}},
		{name: "pod-level resources and claims", mutate: func(s *v1.PodSpec) {
			s.Resources = &v1.ResourceRequirements{Limits: limit(v1.ResourceMemory)}
			s.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu"}}
			s.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
		}, want: []string{"spec.containers[0].resources.claims", "spec.resourceClaims", "spec.resources"}},
		{name: "volume types are cri/volume's to refuse", mutate: func(s *v1.PodSpec) {
			s.Volumes = []v1.Volume{{Name: "n", VolumeSource: v1.VolumeSource{NFS: &v1.NFSVolumeSource{Server: "s", Path: "/"}}}}
			s.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "n", MountPath: "/n", SubPathExpr: "$(X)"}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range Refusals(pod(tt.mutate)) {
				got = append(got, r.Path)
				if r.Why == "" {
					t.Errorf("%s: no reason", r.Path)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Refusals = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMessageNamesEachFieldAndWhy(t *testing.T) {
	p := pod(func(s *v1.PodSpec) {
		s.ImagePullSecrets = []v1.LocalObjectReference{{Name: "registry"}}
		s.Containers[1].VolumeDevices = []v1.VolumeDevice{{Name: "b", DevicePath: "/dev/b"}}
	})
	msg := Message(Refusals(p))
	for _, want := range []string{
		"asks for: spec.containers[1].volumeDevices: podlife attaches no block devices",
		"; spec.imagePullSecrets: podlife pulls images without credentials",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}
