package manifests

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/podlife/podlife/worker"
)

const node = "Node-1" // mixed case: the pod name gets it lower-cased

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustDecode(t *testing.T, path string, data []byte, nodeName string) *v1.Pod {
	t.Helper()
	pod, err := Decode(path, data, nodeName)
	if err != nil {
		t.Fatalf("Decode(%s): %v", path, err)
	}
	return pod
}

func TestDecodeDefaults(t *testing.T) {
	const path = "/etc/manifests/nginx.yaml"
	pod := mustDecode(t, path, readFixture(t, "nginx.yaml"), node)

	if pod.UID == "" {
		t.Fatal("no UID derived")
	}
	if len(pod.UID) != 32 {
		t.Errorf("UID %q: want 32 hex digits", pod.UID)
	}
	g30 := int64(30)
	want := &v1.Pod{}
	want.TypeMeta = pod.TypeMeta
	want.Name, want.Namespace, want.UID = "nginx-node-1", "default", pod.UID
	want.Labels = map[string]string{"app": "nginx"}
	want.Annotations = map[string]string{
		worker.ConfigSourceAnnotation: "file",
		ConfigHashAnnotation:          string(pod.UID),
	}
	want.Spec = v1.PodSpec{
		NodeName:                      node,
		RestartPolicy:                 v1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: &g30,
		DNSPolicy:                     v1.DNSClusterFirst,
		Tolerations:                   []v1.Toleration{{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}},
		Containers: []v1.Container{
			{
				Name: "web", Image: "nginx:1.27", Resources: pod.Spec.Containers[0].Resources,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: v1.TerminationMessageReadFile,
				ImagePullPolicy: v1.PullIfNotPresent,
			},
			{
				Name: "sidecar", Image: "busybox",
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: v1.TerminationMessageReadFile,
				ImagePullPolicy: v1.PullAlways,
			},
		},
	}
	want.Status.Phase = v1.PodPending
	if !equality.Semantic.DeepEqual(pod, want) {
		t.Errorf("Decode:\n got %+v\nwant %+v", pod, want)
	}
	if _, ok := pod.Annotations[ConfigSeenAnnotation]; ok {
		t.Error("Decode set config.seen; Source sets it")
	}
	if !worker.IsStatic(pod) {
		t.Error("decoded pod is not static for the pod workers")
	}
}

// A manifest that sets what Decode defaults keeps its values, except what
// the kubelet always overrides: node name, config source, status.
func TestDecodeKeepsExplicitValues(t *testing.T) {
	pod := mustDecode(t, "/m/etcd.yaml", readFixture(t, "explicit.yaml"), "n1")
	s := pod.Spec
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"name", pod.Name, "etcd-n1"},
		{"namespace", pod.Namespace, "kube-system"},
		{"uid", string(pod.UID), "2f7a3c1e-0000-4000-8000-000000000001"},
		{"config.hash", pod.Annotations[ConfigHashAnnotation], "2f7a3c1e-0000-4000-8000-000000000001"},
		{"config.source", pod.Annotations[worker.ConfigSourceAnnotation], "file"},
		{"other annotation", pod.Annotations["example.com/owner"], "ops"},
		{"nodeName", s.NodeName, "n1"},
		{"restartPolicy", s.RestartPolicy, v1.RestartPolicyOnFailure},
		{"terminationGracePeriodSeconds", *s.TerminationGracePeriodSeconds, int64(0)},
		{"dnsPolicy", s.DNSPolicy, v1.DNSDefault},
		{"tolerations (not duplicated)", len(s.Tolerations), 1},
		{"init imagePullPolicy", s.InitContainers[0].ImagePullPolicy, v1.PullAlways},
		{"init terminationMessagePath", s.InitContainers[0].TerminationMessagePath, "/dev/termination-log"},
		{"imagePullPolicy", s.Containers[0].ImagePullPolicy, v1.PullNever},
		{"terminationMessagePath", s.Containers[0].TerminationMessagePath, "/tmp/msg"},
		{"terminationMessagePolicy", s.Containers[0].TerminationMessagePolicy, v1.TerminationMessageFallbackToLogsOnError},
		{"phase", pod.Status.Phase, v1.PodPending},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	for image, want := range map[string]v1.PullPolicy{
		"nginx":                                 v1.PullAlways,
		"nginx:latest":                          v1.PullAlways,
		"nginx:1.27":                            v1.PullIfNotPresent,
		"registry:5000/nginx":                   v1.PullAlways,
		"registry:5000/nginx:1.27":              v1.PullIfNotPresent,
		"registry:5000/team/nginx:latest":       v1.PullAlways,
		"nginx@sha256:0123456789abcdef":         v1.PullIfNotPresent,
		"nginx:1.27@sha256:0123456789abcdef":    v1.PullIfNotPresent,
		"nginx:latest@sha256:0123456789abcdef":  v1.PullAlways,
		"registry:5000/nginx@sha256:0123456789": v1.PullIfNotPresent,
	} {
		if got := defaultPullPolicy(image); got != want {
			t.Errorf("defaultPullPolicy(%q) = %s, want %s", image, got, want)
		}
	}
}

func TestDecodeUID(t *testing.T) {
	const path = "/m/nginx.yaml"
	base := mustDecode(t, path, readFixture(t, "nginx.yaml"), node).UID
	changed := strings.Replace(string(readFixture(t, "nginx.yaml")), "nginx:1.27", "nginx:1.28", 1)
	for _, c := range []struct {
		name      string
		path      string
		data      []byte
		nodeName  string
		wantEqual bool
	}{
		{"same file again", path, readFixture(t, "nginx.yaml"), node, true},
		{"comments, order, flow style, 0.5 for 500m", path, readFixture(t, "nginx-reformatted.yaml"), node, true},
		{"the same pod in JSON", path, readFixture(t, "nginx.json"), node, true},
		{"changed image", path, []byte(changed), node, false},
		{"other path", "/m/nginx2.yaml", readFixture(t, "nginx.yaml"), node, false},
		{"other node", path, readFixture(t, "nginx.yaml"), "node-2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := mustDecode(t, c.path, c.data, c.nodeName)
			if got := pod.UID == base; got != c.wantEqual {
				t.Errorf("UID %s vs %s: equal = %v, want %v", pod.UID, base, got, c.wantEqual)
			}
			if pod.Annotations[ConfigHashAnnotation] != string(pod.UID) {
				t.Errorf("config.hash %q != UID %q", pod.Annotations[ConfigHashAnnotation], pod.UID)
			}
		})
	}
}

func TestDecodeJSON(t *testing.T) {
	fromJSON := mustDecode(t, "/m/nginx.json", readFixture(t, "nginx.json"), node)
	fromYAML := mustDecode(t, "/m/nginx.json", readFixture(t, "nginx.yaml"), node)
	if !equality.Semantic.DeepEqual(fromJSON, fromYAML) {
		t.Errorf("JSON and YAML of one pod decode differently:\nJSON %+v\nYAML %+v", fromJSON, fromYAML)
	}
}

const validPod = `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: busybox}]
`

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name     string
		manifest string
		want     []string // substrings of the error, after the path
	}{
		{"not YAML", "metadata: {name: p\nspec: [", []string{"invalid YAML"}},
		{"not JSON", `{"metadata": {"name": "p"}`, []string{"invalid YAML or JSON"}},
		{"a list", "- a\n- b\n", []string{"invalid YAML or JSON"}},
		{"empty", "", []string{"empty manifest"}},
		{"only comments", "# nothing\n---\n# here\n", []string{"empty manifest"}},
		{"two documents", validPod + "---\n" + validPod, []string{"2 YAML documents"}},
		{"unknown field", strings.Replace(validPod, "image:", "imag:", 1), []string{`unknown field "imag"`}},
		{"duplicate field", validPod + "  restartPolicy: Always\n  restartPolicy: Never\n", []string{"already set"}},
		{"wrong kind", strings.Replace(validPod, "kind: Pod", "kind: Deployment", 1), []string{`kind "Deployment" is not Pod`}},
		{"wrong apiVersion", strings.Replace(validPod, "apiVersion: v1", "apiVersion: apps/v1", 1), []string{`apiVersion "apps/v1" is not v1`}},
		{"no name", strings.Replace(validPod, "{name: p}", "{namespace: x}", 1), []string{"metadata.name is required"}},
		{"bad name", strings.Replace(validPod, "{name: p}", "{name: P_1}", 1), []string{`metadata.name "P_1"`}},
		{"bad namespace", strings.Replace(validPod, "{name: p}", "{name: p, namespace: a.b}", 1), []string{`metadata.namespace "a.b"`}},
		{"deleting", strings.Replace(validPod, "{name: p}", "{name: p, deletionTimestamp: '2026-01-01T00:00:00Z'}", 1), []string{"deletionTimestamp"}},
		{"no containers", "metadata: {name: p}\nspec: {containers: []}\n", []string{"spec.containers: at least one container is required"}},
		{"no spec", "metadata: {name: p}\n", []string{"spec.containers: at least one container is required"}},
		{"container without name", strings.Replace(validPod, "name: c, ", "", 1), []string{"spec.containers[0].name is required"}},
		{"container without image", strings.Replace(validPod, ", image: busybox", "", 1), []string{"spec.containers[0].image is required"}},
		{"image with spaces", strings.Replace(validPod, "image: busybox", "image: ' busybox'", 1), []string{"spec.containers[0].image", "whitespace"}},
		{"bad container name", strings.Replace(validPod, "name: c,", "name: C_1,", 1), []string{`spec.containers[0].name "C_1"`}},
		{"duplicate container", strings.Replace(validPod, "[{name: c, image: busybox}]", "[{name: c, image: a}, {name: c, image: b}]", 1),
			[]string{`spec.containers[1].name "c" is a duplicate of spec.containers[0]`}},
		{"duplicate of an init container", validPod + "  initContainers: [{name: c, image: a}]\n",
			[]string{`spec.containers[0].name "c" is a duplicate of spec.initContainers[0]`}},
		{"init container without image", validPod + "  initContainers: [{name: i}]\n", []string{"spec.initContainers[0].image is required"}},
		{"init container restartPolicy not Always", validPod + "  initContainers: [{name: s, image: a, restartPolicy: Always}, {name: i, image: a, restartPolicy: OnFailure}]\n",
			[]string{`spec.initContainers[1].restartPolicy "OnFailure" is not Always`}},
		{"negative grace", validPod + "  terminationGracePeriodSeconds: -1\n", []string{"spec.terminationGracePeriodSeconds -1 is negative"}},
		{"bad restartPolicy", validPod + "  restartPolicy: Sometimes\n", []string{`spec.restartPolicy "Sometimes"`}},
		{"bad imagePullPolicy", strings.Replace(validPod, "image: busybox", "image: busybox, imagePullPolicy: Maybe", 1), []string{`imagePullPolicy "Maybe"`}},
		{"every problem at once", "metadata: {}\nspec:\n  restartPolicy: x\n  terminationGracePeriodSeconds: -5\n  containers: [{}]\n",
			[]string{"metadata.name is required", "spec.containers[0].name is required", "spec.containers[0].image is required", "-5 is negative", `restartPolicy "x"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const path = "/etc/manifests/bad-pod.yaml"
			pod, err := Decode(path, []byte(c.manifest), node)
			if err == nil {
				t.Fatalf("Decode accepted %q: %+v", c.manifest, pod)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+": ") {
				t.Errorf("error %q does not start with the file name", msg)
			}
			if fe, ok := errors.AsType[*FileError](err); !ok || fe.Path != path {
				t.Errorf("error %q is not a *FileError for %s", msg, path)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestDecodeRejectsBadNodeName(t *testing.T) {
	for _, n := range []string{"", "bad_node"} {
		if _, err := Decode("/m/p.yaml", []byte(validPod), n); err == nil || !strings.Contains(err.Error(), "node name") {
			t.Errorf("Decode with node name %q: err = %v, want a node name error", n, err)
		}
	}
}

// A sidecar, an init container with restartPolicy Always, is valid and
// keeps its policy.
func TestDecodeSidecar(t *testing.T) {
	pod := mustDecode(t, "/m/p.yaml", []byte(validPod+"  initContainers: [{name: s, image: a, restartPolicy: Always}]\n"), node)
	if p := pod.Spec.InitContainers[0].RestartPolicy; p == nil || *p != v1.ContainerRestartPolicyAlways {
		t.Errorf("the sidecar's restartPolicy is %v", p)
	}
}
