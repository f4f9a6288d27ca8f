package podstatus

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// statusPatch is the strategic merge patch that turns the API's status from
// into to. Its metadata carries the UID and resourceVersion of the pod from
// was read from, so the API server applies it to that pod as it was read
// and to nothing else: another pod of the same name fails the UID check, a
// newer version of the pod the resourceVersion check (a Conflict: the merge
// must be redone on the current status).
func statusPatch(uid types.UID, resourceVersion string, from, to v1.PodStatus) ([]byte, error) {
	oldJSON, err := json.Marshal(v1.Pod{Status: from})
	if err != nil {
		return nil, fmt.Errorf("encode the API status: %w", err)
	}
	newJSON, err := json.Marshal(v1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: uid, ResourceVersion: resourceVersion},
		Status:     to,
	})
	if err != nil {
		return nil, fmt.Errorf("encode the new status: %w", err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldJSON, newJSON, v1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("create the status patch: %w", err)
	}
	return patch, nil
}
