package podstatus

import (
	"encoding/json"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

func TestStatusPatch(t *testing.T) {
	others := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, LastTransitionTime: t0}
	for _, tc := range []struct {
		name     string
		from, to v1.PodStatus
	}{
		{"phase and conditions", v1.PodStatus{Phase: v1.PodPending}, v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, t0)}}},
		{"a condition removed, another kept", v1.PodStatus{Conditions: []v1.PodCondition{others, cond(v1.PodReadyToStartContainers, v1.ConditionTrue, t0)}}, v1.PodStatus{Conditions: []v1.PodCondition{others}}},
		{"no change", v1.PodStatus{Phase: v1.PodRunning}, v1.PodStatus{Phase: v1.PodRunning}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			patch, err := statusPatch("uid-1", "42", tc.from, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			var meta struct {
				Metadata struct{ UID, ResourceVersion string } `json:"metadata"`
			}
			if err := json.Unmarshal(patch, &meta); err != nil {
				t.Fatal(err)
			}
			if meta.Metadata.UID != "uid-1" || meta.Metadata.ResourceVersion != "42" {
				t.Errorf("patch %s: metadata %+v, want the UID and resourceVersion as preconditions", patch, meta.Metadata)
			}
			// Applied to the API's pod, the patch gives the new status.
			fromJSON, _ := json.Marshal(v1.Pod{Status: tc.from})
			applied, err := strategicpatch.StrategicMergePatch(fromJSON, patch, v1.Pod{})
			if err != nil {
				t.Fatal(err)
			}
			var got v1.Pod
			if err := json.Unmarshal(applied, &got); err != nil {
				t.Fatal(err)
			}
			if !apiequality.Semantic.DeepEqual(got.Status, tc.to) {
				t.Errorf("patched status %+v, want %+v", got.Status, tc.to)
			}
		})
	}
}
