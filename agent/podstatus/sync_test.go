package podstatus

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestDeletionWanted(t *testing.T) {
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
		name string
		pod  *v1.Pod
		want bool
	}{
		{"not being deleted", apiPod(false, v1.PodFailed, false), false},
		{"deleted and terminal", apiPod(true, v1.PodFailed, false), true},
		{"deleted and succeeded", apiPod(true, v1.PodSucceeded, false), true},
		{"deleted while running", apiPod(true, v1.PodRunning, false), false},
		// Its Failed phase comes first (the kubelet's canBeDeleted).
		{"deleted while pending", apiPod(true, v1.PodPending, false), false},
		{"a mirror pod is never deleted", apiPod(true, v1.PodFailed, true), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := deletionWanted(tc.pod); got != tc.want {
				t.Errorf("deletionWanted = %v, want %v", got, tc.want)
			}
		})
	}
}
