package manifests

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podlife/podlife/kubetypes"
)

// FuzzDecode feeds arbitrary bytes to Decode: it never panics, every error
// names the file, and every pod it accepts is one the engine accepts.
func FuzzDecode(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [broken\n"))
	f.Add([]byte(`{"kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i"}],"initContainers":[{"name":"c","image":"i"}]}}`))
	f.Add([]byte("metadata: {name: a, uid: x/../../../escaped}\nspec: {terminationGracePeriodSeconds: 9300000000, containers: [{name: c, image: i, resources: {limits: {memory: 12XB}}}]}\n"))
	const path = "/etc/podlife/manifests/pod.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		pod, err := Decode(path, data, "node-1")
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if pod.UID == "" || !strings.HasSuffix(pod.Name, "-node-1") || pod.Namespace == "" || len(pod.Spec.Containers) == 0 {
			t.Fatalf("accepted an incomplete pod: uid %q name %q namespace %q containers %d", pod.UID, pod.Name, pod.Namespace, len(pod.Spec.Containers))
		}
		if !kubetypes.IsStatic(pod) || pod.Annotations[kubetypes.ConfigHashAnnotation] != string(pod.UID) {
			t.Fatalf("accepted pod lacks the static-pod annotations: %v", pod.Annotations)
		}
		if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g < 0 || *g > maxDurationSeconds {
			t.Fatalf("accepted pod has grace period %v", g)
		}
		if uid := string(pod.UID); strings.ContainsAny(uid, "/\\") || strings.Contains(uid, "..") || len(uid) > maxUIDLength {
			t.Fatalf("accepted a UID unsafe in a path: %q", uid)
		}
		again, err := Decode(path, data, "node-1")
		if err != nil || again.UID != pod.UID {
			t.Fatalf("decoding the same bytes again: %v, UID %v then %v", err, pod.UID, again.UID)
		}
	})
}
