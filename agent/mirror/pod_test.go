package mirror

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/kubetypes"
)

func testStatic(hash string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-n1", Namespace: "default", UID: "static-uid", ResourceVersion: "7",
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{kubetypes.ConfigHashAnnotation: hash, kubetypes.ConfigSourceAnnotation: kubetypes.SourceFile},
		},
		Spec:   v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "c", Image: "busybox"}}},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
}

func TestNewMirrorPod(t *testing.T) {
	static := testStatic("h1")
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}
	m := newMirrorPod(static, "h1", node)
	if m.UID != "" || m.ResourceVersion != "" {
		t.Errorf("UID %q resourceVersion %q: want none", m.UID, m.ResourceVersion)
	}
	if m.Name != "web-n1" || m.Namespace != "default" || m.Labels["app"] != "web" || m.Spec.NodeName != "n1" {
		t.Errorf("metadata or spec not copied: %+v", m)
	}
	if m.Annotations[v1.MirrorPodAnnotationKey] != "h1" || m.Annotations[kubetypes.ConfigSourceAnnotation] != kubetypes.SourceFile {
		t.Errorf("annotations %v", m.Annotations)
	}
	if _, ok := static.Annotations[v1.MirrorPodAnnotationKey]; ok {
		t.Error("the static pod's annotations were changed")
	}
	owner := metav1.GetControllerOf(m)
	if owner == nil || owner.APIVersion != "v1" || owner.Kind != "Node" || owner.Name != "n1" || owner.UID != "node-uid" || owner.BlockOwnerDeletion != nil {
		t.Errorf("owner %+v, want the Node as controller, without blockOwnerDeletion", owner)
	}
	if m.Status.Phase != "" {
		t.Errorf("status copied: %+v", m.Status)
	}
	if !kubetypes.IsMirror(m) || kubetypes.IsMirror(static) {
		t.Error("IsMirrorPod")
	}
}

func TestIsMirrorOf(t *testing.T) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}
	live := newMirrorPod(testStatic("h1"), "h1", node)
	now := metav1.Now()
	for _, tc := range []struct {
		name    string
		edit    func(p *v1.Pod)
		hash    string
		nodeUID types.UID
		want    bool
	}{
		{"live", func(*v1.Pod) {}, "h1", "node-uid", true},
		{"static changed", func(*v1.Pod) {}, "h2", "node-uid", false},
		{"being deleted", func(p *v1.Pod) { p.DeletionTimestamp = &now }, "h1", "node-uid", false},
		{"older node", func(*v1.Pod) {}, "h1", "new-node-uid", false},
		{"no owner", func(p *v1.Pod) { p.OwnerReferences = nil }, "h1", "node-uid", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := live.DeepCopy()
			tc.edit(p)
			if got := isMirrorOf(p, tc.hash, tc.nodeUID); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStaticHashMissing(t *testing.T) {
	static := testStatic("")
	_, err := staticHash(static)
	if err == nil || !strings.Contains(err.Error(), "default/web-n1 (UID static-uid)") {
		t.Errorf("error %v, want one naming the pod", err)
	}
}
