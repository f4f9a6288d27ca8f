package server

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// What the read-only endpoint serves of a pod carries none of its
// secrets, keeps what a node's user may see, and leaves the agent's own
// copy as it was.
func TestRedactedPodList(t *testing.T) {
	data, err := os.ReadFile("testdata/secret-pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pod v1.Pod
	if err := yaml.UnmarshalStrict(data, &pod); err != nil {
		t.Fatal(err)
	}
	list := &v1.PodList{Items: []v1.Pod{pod}}
	out, err := json.Marshal(redactedPodList(list))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "s3cret") {
		t.Errorf("the served pod holds a secret:\n%s", out)
	}
	for _, kept := range []string{`"DB_PASSWORD"`, `"FROM_SECRET"`, `"secretKeyRef":{"name":"db","key":"password"}`,
		`"INIT_TOKEN"`, `"DEBUG_KEY"`, `"postgres:16"`, `"team":"storage"`, `"path":"/ready"`, `"name":"Authorization"`} {
		if !strings.Contains(string(out), kept) {
			t.Errorf("the served pod lost %s:\n%s", kept, out)
		}
	}
	orig, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(orig), "s3cret"); n != 12 {
		t.Errorf("the host's own list changed: %d secrets left in it, want all 12", n)
	}
}
