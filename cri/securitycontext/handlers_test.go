package securitycontext

import (
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The Node's runtimeHandlers list every handler the runtime's Status
// lists, in its order, with both features said (the kubelet's
// nodestatus.RuntimeHandlers); an old runtime lists none.
func TestNodeRuntimeHandlers(t *testing.T) {
	resp := &runtimeapi.StatusResponse{RuntimeHandlers: []*runtimeapi.RuntimeHandler{
		{Name: "", Features: &runtimeapi.RuntimeHandlerFeatures{RecursiveReadOnlyMounts: true, UserNamespaces: true}},
		{Name: "runsc"},
	}}
	f := FeaturesOf(resp)
	got := f.NodeRuntimeHandlers()
	if len(got) != 2 || got[0].Name != "" || !*got[0].Features.RecursiveReadOnlyMounts || !*got[0].Features.UserNamespaces ||
		got[1].Name != "runsc" || *got[1].Features.RecursiveReadOnlyMounts || *got[1].Features.UserNamespaces {
		t.Errorf("NodeRuntimeHandlers = %+v", got)
	}
	if !f.RecursiveReadOnly[""] || f.RecursiveReadOnly["runsc"] {
		t.Errorf("RecursiveReadOnly = %v", f.RecursiveReadOnly)
	}
	if got := FeaturesOf(&runtimeapi.StatusResponse{}).NodeRuntimeHandlers(); len(got) != 0 {
		t.Errorf("an old runtime: %+v", got)
	}
}
