package apisource

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/kubetypes"
)

func TestLifecycleChanged(t *testing.T) {
	base := func() *v1.Pod {
		grace := int64(30)
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u", Labels: map[string]string{"a": "1"}, ResourceVersion: "1"},
			Spec:       v1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []v1.Container{{Name: "c", Image: "i"}}},
			Status:     v1.PodStatus{Phase: v1.PodPending},
		}
	}
	now := metav1.Now()
	short := int64(1)
	for _, tc := range []struct {
		name string
		edit func(*v1.Pod)
		want bool
	}{
		{"nothing", func(*v1.Pod) {}, false},
		{"status only (the agent's own write)", func(p *v1.Pod) { p.Status.Phase = v1.PodRunning; p.ResourceVersion = "2" }, false},
		{"managed fields only", func(p *v1.Pod) { p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}} }, false},
		{"image", func(p *v1.Pod) { p.Spec.Containers[0].Image = "j" }, true},
		{"label", func(p *v1.Pod) { p.Labels["a"] = "2" }, true},
		{"annotation", func(p *v1.Pod) { p.Annotations = map[string]string{"x": "y"} }, true},
		{"deletion", func(p *v1.Pod) { p.DeletionTimestamp = &now }, true},
		{"shorter deletion grace", func(p *v1.Pod) { p.DeletionGracePeriodSeconds = &short }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, pod := base(), base()
			tc.edit(pod)
			if got := LifecycleChanged(old, pod); got != tc.want {
				t.Errorf("LifecycleChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAnnotatedIsNeverStatic: a pod from the API server is marked so, even
// when it copied a static pod's annotations, and the informer's copy is
// left alone.
func TestAnnotatedIsNeverStatic(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kubetypes.ConfigSourceAnnotation: "file"}}}
	got := annotated(pod)
	if kubetypes.IsStatic(got) {
		t.Errorf("annotated pod is static: %v", got.Annotations)
	}
	if pod.Annotations[kubetypes.ConfigSourceAnnotation] != "file" {
		t.Errorf("the informer's copy was changed: %v", pod.Annotations)
	}
	if kubetypes.IsStatic(annotated(&v1.Pod{})) {
		t.Error("a pod without annotations is static once annotated")
	}
}
