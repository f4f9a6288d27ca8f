package securitycontext

import (
	"maps"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestFeaturesOf(t *testing.T) {
	for _, tc := range []struct {
		name       string
		resp       *runtimeapi.StatusResponse
		wantGroups bool
		wantUserns map[string]bool
	}{
		{"containerd 1.6: nothing said", &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{}}, false, map[string]bool{}},
		{"no response", nil, false, map[string]bool{}},
		{"features and handlers", &runtimeapi.StatusResponse{
			Features: &runtimeapi.RuntimeFeatures{SupplementalGroupsPolicy: true},
			RuntimeHandlers: []*runtimeapi.RuntimeHandler{
				{Name: "", Features: &runtimeapi.RuntimeHandlerFeatures{UserNamespaces: true}},
				{Name: "runsc", Features: &runtimeapi.RuntimeHandlerFeatures{}},
			},
		}, true, map[string]bool{"": true}},
	} {
		f := FeaturesOf(tc.resp)
		if f.SupplementalGroupsPolicy != tc.wantGroups || !maps.Equal(f.UserNamespaces, tc.wantUserns) {
			t.Errorf("%s: %+v", tc.name, f)
		}
	}
}
