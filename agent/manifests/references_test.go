package manifests

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// A static pod referencing an API object is refused at decode, with the
// kubelet's message, the kind named as the kubelet names it.
func TestAPIObjectReferences(t *testing.T) {
	plain := func(edit func(*v1.PodSpec)) *v1.Pod {
		pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "busybox"}}}}
		edit(&pod.Spec)
		return pod
	}
	vol := func(src v1.VolumeSource) func(*v1.PodSpec) {
		return func(s *v1.PodSpec) { s.Volumes = append(s.Volumes, v1.Volume{Name: "v", VolumeSource: src}) }
	}
	projected := func(p v1.VolumeProjection) func(*v1.PodSpec) {
		return vol(v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{p}}})
	}
	for _, tc := range []struct {
		name string
		edit func(*v1.PodSpec)
		want string
	}{
		{"nothing", func(*v1.PodSpec) {}, ""},
		{"an emptyDir and a projected downwardAPI", func(s *v1.PodSpec) {
			vol(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})(s)
			projected(v1.VolumeProjection{DownwardAPI: &v1.DownwardAPIProjection{}})(s)
		}, ""},
		{"a service account", func(s *v1.PodSpec) { s.ServiceAccountName = "sa" }, "serviceaccounts"},
		{"an image pull secret", func(s *v1.PodSpec) { s.ImagePullSecrets = []v1.LocalObjectReference{{Name: "reg"}} }, "secrets"},
		{"secretKeyRef in an init container", func(s *v1.PodSpec) {
			s.InitContainers = []v1.Container{{Name: "i", Env: []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{Key: "k"}}}}}}
		}, "secrets"},
		{"envFrom a Secret", func(s *v1.PodSpec) { s.Containers[0].EnvFrom = []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{}}} }, "secrets"},
		{"configMapKeyRef", func(s *v1.PodSpec) {
			s.Containers[0].Env = []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{Key: "k"}}}}
		}, "configmaps"},
		{"envFrom a ConfigMap in an ephemeral container", func(s *v1.PodSpec) {
			s.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "e", EnvFrom: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{}}}}}}
		}, "configmaps"},
		{"a secret volume", vol(v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}), "secrets"},
		{"a configMap volume", vol(v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}), "configmaps"},
		{"a projected Secret", projected(v1.VolumeProjection{Secret: &v1.SecretProjection{}}), "secrets"},
		{"a projected ConfigMap", projected(v1.VolumeProjection{ConfigMap: &v1.ConfigMapProjection{}}), "configmaps"},
		{"a projected token", projected(v1.VolumeProjection{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "t"}}), "serviceaccounts (via projected volumes)"},
		{"a projected cluster trust bundle", projected(v1.VolumeProjection{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{}}), "clustertrustbundles"},
		{"a PVC", vol(v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}), "persistentvolumeclaims"},
		{"an RBD volume's secretRef", vol(v1.VolumeSource{RBD: &v1.RBDVolumeSource{SecretRef: &v1.LocalObjectReference{Name: "s"}}}), "secrets"},
		{"a resource claim", func(s *v1.PodSpec) { s.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu"}} }, "resourceclaims"},
	} {
		if got := apiObjectReference(plain(tc.edit)); got != tc.want {
			t.Errorf("%s: %q; want %q", tc.name, got, tc.want)
		}
	}

	const path = "/etc/manifests/app.yaml"
	_, err := Decode(path, readFixture(t, "references-secret-env.yaml"), node)
	if err == nil || !strings.Contains(err.Error(), "static pods may not reference secrets") || !strings.Contains(err.Error(), path) {
		t.Errorf("Decode of a static pod with a secretKeyRef: %v; want the kubelet's refusal", err)
	}
}
