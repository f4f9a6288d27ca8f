package podstatus

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestDeletionWanted(t *testing.T) {
	ran := v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "c", ContainerID: "cri://1"}}}
	created := v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{{Name: "c", ContainerID: "cri://1"}}}
	waiting := v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{{Name: "c", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}
	apiPod := func(deleting bool, phase v1.PodPhase, mirror bool) *v1.Pod {
		p := &v1.Pod{Status: v1.PodStatus{Phase: phase}}
		if deleting {
			p.DeletionTimestamp = &t0
		}
		if mirror {
			p.Annotations = map[string]string{v1.MirrorPodAnnotationKey: "hash"}
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		pod   *v1.Pod
		local v1.PodStatus
		want  bool
	}{
		{"not being deleted", apiPod(false, v1.PodFailed, false), ran, false},
		{"deleted and terminal", apiPod(true, v1.PodFailed, false), ran, true},
		{"deleted and succeeded", apiPod(true, v1.PodSucceeded, false), ran, true},
		{"deleted while running", apiPod(true, v1.PodRunning, false), ran, false},
		{"deleted, pending, never ran here", apiPod(true, v1.PodPending, false), waiting, true},
		{"deleted, pending, a container was created", apiPod(true, v1.PodPending, false), created, false},
		{"a mirror pod is never deleted", apiPod(true, v1.PodFailed, true), ran, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := deletionWanted(tc.pod, tc.local); got != tc.want {
				t.Errorf("deletionWanted = %v, want %v", got, tc.want)
			}
		})
	}
}
