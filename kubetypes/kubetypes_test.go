package kubetypes

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIdentity(t *testing.T) {
	pod := func(annotations map[string]string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
	}
	for _, tc := range []struct {
		name           string
		pod            *v1.Pod
		static, mirror bool
	}{
		{"no annotations", pod(nil), false, false},
		{"from a file", pod(map[string]string{ConfigSourceAnnotation: SourceFile}), true, false},
		{"from another non-API source", pod(map[string]string{ConfigSourceAnnotation: "http"}), true, false},
		{"from the API", pod(map[string]string{ConfigSourceAnnotation: SourceAPI}), false, false},
		{"a mirror", pod(map[string]string{v1.MirrorPodAnnotationKey: "h"}), false, true},
	} {
		if got := IsStatic(tc.pod); got != tc.static {
			t.Errorf("%s: IsStatic = %v, want %v", tc.name, got, tc.static)
		}
		if got := IsMirror(tc.pod); got != tc.mirror {
			t.Errorf("%s: IsMirror = %v, want %v", tc.name, got, tc.mirror)
		}
	}
	if got := FullName("web", "default"); got != "web_default" {
		t.Errorf("FullName = %q, want web_default", got)
	}
}
