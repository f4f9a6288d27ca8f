package kuberuntime

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/podlife/podlife/cri/volume"
	"github.com/podlife/podlife/internal/crifake"
)

// notFound answers every ConfigMap and Secret with the API's NotFound.
type notFound struct{}

func (notFound) ConfigMap(_ context.Context, _, name string) (*v1.ConfigMap, error) {
	return nil, apierrors.NewNotFound(v1.Resource("configmap"), name)
}

func (notFound) Secret(_ context.Context, _, name string) (*v1.Secret, error) {
	return nil, apierrors.NewNotFound(v1.Resource("secret"), name)
}

// The events the upstream node e2e specs select by reason and match by
// message have the kubelet's exact texts: pod_conditions_test.go waits for
// "MountVolume.SetUp failed for volume" (a ConfigMap or Secret volume whose
// object is missing), pod_hostnamefqdn_test.go for "Failed to create pod
// sandbox: failed to construct FQDN from pod hostname and cluster domain,
// FQDN " (setHostnameAsFQDN with an FQDN over 64 bytes).
func TestEventTexts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pod    func() *v1.Pod
		reason string
		want   string
	}{
		{
			name: "configMap volume, object missing",
			pod: func() *v1.Pod {
				return crifake.VolumePod([]v1.Volume{{Name: "cm", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
					LocalObjectReference: v1.LocalObjectReference{Name: "cm-that-unblock-pod-condition"}}}}},
					v1.VolumeMount{Name: "cm", MountPath: "/config"})
			},
			reason: "FailedMount",
			want:   `MountVolume.SetUp failed for volume "cm" : configmap "cm-that-unblock-pod-condition" not found`,
		},
		{
			name: "secret volume, object missing",
			pod: func() *v1.Pod {
				return crifake.VolumePod([]v1.Volume{{Name: "secret", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{
					SecretName: "secret-that-unblock-pod-condition"}}}},
					v1.VolumeMount{Name: "secret", MountPath: "/secret"})
			},
			reason: "FailedMount",
			want:   `MountVolume.SetUp failed for volume "secret" : secret "secret-that-unblock-pod-condition" not found`,
		},
		{
			name: "a mount of no volume: no one volume failed",
			pod: func() *v1.Pod {
				return crifake.VolumePod(nil, v1.VolumeMount{Name: "nope", MountPath: "/x"})
			},
			reason: "FailedMount",
			want:   `Unable to attach or mount volumes: pod ns/web: container "app": volumeMount "nope" at "/x": the pod has no volume "nope"`,
		},
		{
			name: "FQDN longer than 64 bytes",
			pod: func() *v1.Pod {
				pod := crifake.MakePod("hostfqdnveryveryveryverylongforfqdntobemorethan64bytes-1", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
				pod.Spec.Subdomain, pod.Spec.SetHostnameAsFQDN = "t", new(true)
				return pod
			},
			reason: "FailedCreatePodSandBox",
			want: "Failed to create pod sandbox: failed to construct FQDN from pod hostname and cluster domain, FQDN " +
				"hostfqdnveryveryveryverylongforfqdntobemorethan64bytes-1.t.ns.svc.cluster.local is too long (64 characters is the max, 79 characters requested)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{VolumeAPI: volume.API{ConfigMaps: notFound{}, Secrets: notFound{}}}, "img")
			pod := tc.pod()
			if _, err := h.syncPod(pod); err == nil {
				t.Fatal("SyncPod succeeded; want it failed")
			}
			if got := h.events.Messages(pod.UID, tc.reason); len(got) != 1 || got[0] != tc.want {
				t.Errorf("%s events %q, want [%q]", tc.reason, got, tc.want)
			}
			if n := h.calls("RunPodSandbox"); n != 0 {
				t.Errorf("%d sandboxes run; want none", n)
			}
			// The specs then wait for the pod to be Pending and scheduled:
			// the node writes a status although nothing runs.
			st := h.statuses.last(t, pod.UID)
			scheduled := slices.ContainsFunc(st.Conditions, func(c v1.PodCondition) bool {
				return c.Type == v1.PodScheduled && c.Status == v1.ConditionTrue
			})
			if st.Phase != v1.PodPending || !scheduled {
				t.Errorf("status phase %q, conditions %+v; want Pending and PodScheduled True", st.Phase, st.Conditions)
			}
		})
	}
}
