package kuberuntime

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/internal/crifake"
)

// An update that changes a container's spec replaces the running instance
// (stopped within the pod's grace, then a new attempt); a change of
// resources alone, or none, keeps it.
func TestSyncPodReplacesChangedContainer(t *testing.T) {
	for _, tc := range []struct {
		name        string
		change      func(c *v1.Container)
		wantReplace bool
	}{
		{name: "no change", change: func(*v1.Container) {}},
		{name: "new args", change: func(c *v1.Container) { c.Args = []string{"--verbose"} }, wantReplace: true},
		{name: "new image", change: func(c *v1.Container) { c.Image = "img2" }, wantReplace: true},
		{name: "resources only", change: func(c *v1.Container) {
			c.Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img", "img2")
			pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}, crifake.Ctr{Name: "side"})
			h.mustSync(pod)
			h.events.Reset()
			updated := pod.DeepCopy()
			tc.change(&updated.Spec.Containers[0])
			h.mustSync(updated)

			first := "web_ns_uid-web_0_app_0"
			_, containers := h.podObjects(pod.UID)
			if !tc.wantReplace {
				if len(containers) != 2 || h.containerState(first) != runtimeapi.ContainerState_CONTAINER_RUNNING {
					t.Fatalf("containers %v, first %s: want the two first instances, running", containers, h.containerState(first))
				}
				if got := h.events.Reasons(pod.UID); len(got) != 0 {
					t.Errorf("events %v, want none", got)
				}
				return
			}
			second := "web_ns_uid-web_0_app_1"
			if h.containerState(first) != runtimeapi.ContainerState_CONTAINER_EXITED || h.containerState(second) != runtimeapi.ContainerState_CONTAINER_RUNNING {
				t.Fatalf("first %s, second %s: want the old instance stopped and a new one running", h.containerState(first), h.containerState(second))
			}
			if got := h.container(second).GetImage().GetImage(); got != updated.Spec.Containers[0].Image {
				t.Errorf("new instance runs image %s, want %s", got, updated.Spec.Containers[0].Image)
			}
			if h.containerState("web_ns_uid-web_0_side_0") != runtimeapi.ContainerState_CONTAINER_RUNNING {
				t.Error("the unchanged container was touched")
			}
			if got := h.events.Reasons(pod.UID); !slices.Equal(got, []string{"Killing", "Created", "Started"}) {
				t.Errorf("events %v", got)
			}
			if stops := h.rt.StopCalls(); len(stops) != 1 || stops[0].Timeout != 30 {
				t.Errorf("stops %+v, want one with the pod's grace 30", stops)
			}
		})
	}
}

// A running sidecar whose image an update changed is replaced, as the
// kubelet does (issue 29: podlife left it running the old image); the
// regular container is left alone.
func TestSyncPodReplacesSidecarWhoseImageChanged(t *testing.T) {
	h := newHarness(t, Options{}, "img", "img2")
	pod := crifake.WithInits(crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}), crifake.Init{Name: "sc", Sidecar: true})
	h.mustSync(pod)
	h.mustSync(pod)
	app, first, second := "web_ns_uid-web_0_app_0", "web_ns_uid-web_0_sc_0", "web_ns_uid-web_0_sc_1"
	if h.containerState(app) != runtimeapi.ContainerState_CONTAINER_RUNNING || h.containerState(first) != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("app %s, sidecar %s: want both running", h.containerState(app), h.containerState(first))
	}
	updated := pod.DeepCopy()
	updated.Spec.InitContainers[0].Image = "img2"
	h.mustSync(updated)
	if h.containerState(first) != runtimeapi.ContainerState_CONTAINER_EXITED || h.containerState(second) != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("first %s, second %s: want the old sidecar stopped and a new one running", h.containerState(first), h.containerState(second))
	}
	if got := h.container(second).GetImage().GetImage(); got != "img2" {
		t.Errorf("new sidecar runs image %s, want img2", got)
	}
	if h.containerState(app) != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Error("the regular container was touched")
	}
}
