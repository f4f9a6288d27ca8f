package manifests

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/podlife/podlife/kubetypes"
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
		kubetypes.ConfigSourceAnnotation: "file",
		kubetypes.ConfigHashAnnotation:   string(pod.UID),
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
	if _, ok := pod.Annotations[kubetypes.ConfigSeenAnnotation]; ok {
		t.Error("Decode set config.seen; Source sets it")
	}
	if !kubetypes.IsStatic(pod) {
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
		{"config.hash", pod.Annotations[kubetypes.ConfigHashAnnotation], "2f7a3c1e-0000-4000-8000-000000000001"},
		{"config.source", pod.Annotations[kubetypes.ConfigSourceAnnotation], "file"},
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
			if pod.Annotations[kubetypes.ConfigHashAnnotation] != string(pod.UID) {
				t.Errorf("config.hash %q != UID %q", pod.Annotations[kubetypes.ConfigHashAnnotation], pod.UID)
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
		{"no name", strings.Replace(validPod, "{name: p}", "{namespace: x}", 1), []string{"metadata.name: Required value: a static pod must be named"}},
		{"bad name", strings.Replace(validPod, "{name: p}", "{name: P_1}", 1), []string{`metadata.name: Invalid value: "P_1"`, `checked as "P_1-node-1"`}},
		{"bad namespace", strings.Replace(validPod, "{name: p}", "{name: p, namespace: a.b}", 1), []string{`metadata.namespace: Invalid value: "a.b"`}},
		{"deleting", strings.Replace(validPod, "{name: p}", "{name: p, deletionTimestamp: '2026-01-01T00:00:00Z'}", 1), []string{"metadata.deletionTimestamp: Forbidden"}},
		{"no containers", "metadata: {name: p}\nspec: {containers: []}\n", []string{"spec.containers: Required value: at least one container is required"}},
		{"no spec", "metadata: {name: p}\n", []string{"spec.containers: Required value: at least one container is required"}},
		{"container without name", strings.Replace(validPod, "name: c, ", "", 1), []string{"spec.containers[0].name: Required value"}},
		{"container without image", strings.Replace(validPod, ", image: busybox", "", 1), []string{"spec.containers[0].image: Required value"}},
		{"image with spaces", strings.Replace(validPod, "image: busybox", "image: ' busybox'", 1), []string{`spec.containers[0].image: Invalid value: " busybox"`, "whitespace"}},
		{"bad container name", strings.Replace(validPod, "name: c,", "name: C_1,", 1), []string{`spec.containers[0].name: Invalid value: "C_1"`}},
		{"duplicate container", strings.Replace(validPod, "[{name: c, image: busybox}]", "[{name: c, image: a}, {name: c, image: b}]", 1),
			[]string{`spec.containers[1].name: Duplicate value: "c": already the name of spec.containers[0]`}},
		{"duplicate of an init container", validPod + "  initContainers: [{name: c, image: a}]\n",
			[]string{`spec.containers[0].name: Duplicate value: "c": already the name of spec.initContainers[0]`}},
		{"init container without image", validPod + "  initContainers: [{name: i}]\n", []string{"spec.initContainers[0].image: Required value"}},
		{"init container restartPolicy unknown", validPod + "  initContainers: [{name: s, image: a, restartPolicy: Always}, {name: i, image: a, restartPolicy: Sometimes}]\n",
			[]string{`spec.initContainers[1].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"`}},
		{"container restartPolicy unknown", strings.Replace(validPod, "image: busybox", "image: busybox, restartPolicy: Sometimes", 1),
			[]string{`spec.containers[0].restartPolicy: Unsupported value: "Sometimes"`}},
		{"restart rules without a restartPolicy", strings.Replace(validPod, "image: busybox", "image: busybox, restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [42]}}]", 1),
			[]string{`spec.containers[0].restartPolicy: Required value: must specify restartPolicy when restart rules are used`}},
		{"restart rule without exit codes", strings.Replace(validPod, "image: busybox", "image: busybox, restartPolicy: Never, restartPolicyRules: [{action: Restart}]", 1),
			[]string{`spec.containers[0].restartPolicyRules[0].exitCodes: Required value`}},
		{"restart rule with unknown action and operator", strings.Replace(validPod, "image: busybox", "image: busybox, restartPolicy: Never, restartPolicyRules: [{action: Pause, exitCodes: {operator: Gt, values: [1]}}]", 1),
			[]string{`spec.containers[0].restartPolicyRules[0].action: Unsupported value: "Pause"`, `spec.containers[0].restartPolicyRules[0].exitCodes.operator: Unsupported value: "Gt"`}},
		{"too many restart rules", strings.Replace(validPod, "image: busybox", "image: busybox, restartPolicy: Never, restartPolicyRules: ["+strings.Repeat("{action: Restart, exitCodes: {operator: In, values: [1]}},", 21)+"]", 1),
			[]string{`spec.containers[0].restartPolicyRules: Too many: 21: must have at most 20 items`}},
		{"fileKeyRef to a volume that is not an emptyDir", strings.Replace(validPod, "image: busybox", "image: busybox, env: [{name: A, valueFrom: {fileKeyRef: {volumeName: host, path: a.env, key: A}}}]", 1) +
			"  volumes: [{name: host, hostPath: {path: /etc}}]\n",
			[]string{`spec.containers[0].env[0].valueFrom.fileKeyRef.volumeName: Invalid value: "host": referenced volume must be of type emptyDir`}},
		{"fileKeyRef to no volume, out of it, without a key", strings.Replace(validPod, "image: busybox", "image: busybox, env: [{name: A, valueFrom: {fileKeyRef: {volumeName: none, path: ../a.env, key: ''}}}]", 1),
			[]string{`spec.containers[0].env[0].valueFrom.fileKeyRef.volumeName: Not found: "none"`, `spec.containers[0].env[0].valueFrom.fileKeyRef.path: Invalid value: "../a.env": must not contain '..'`,
				`spec.containers[0].env[0].valueFrom.fileKeyRef.key: Required value`}},
		{"fileKeyRef key with '='", validPod + "  initContainers: [{name: i, image: a, env: [{name: A, valueFrom: {fileKeyRef: {volumeName: v, path: a.env, key: 'A=B'}}}]}]\n  volumes: [{name: v, emptyDir: {}}]\n",
			[]string{`spec.initContainers[0].env[0].valueFrom.fileKeyRef.key: Invalid value: "A=B"`}},
		{"negative grace", validPod + "  terminationGracePeriodSeconds: -1\n", []string{"spec.terminationGracePeriodSeconds: Invalid value: -1: must be at least 0"}},
		{"bad restartPolicy", validPod + "  restartPolicy: Sometimes\n", []string{`spec.restartPolicy: Unsupported value: "Sometimes"`}},
		{"bad imagePullPolicy", strings.Replace(validPod, "image: busybox", "image: busybox, imagePullPolicy: Maybe", 1), []string{`spec.containers[0].imagePullPolicy: Unsupported value: "Maybe"`}},
		{"every problem at once", "metadata: {}\nspec:\n  restartPolicy: x\n  terminationGracePeriodSeconds: -5\n  containers: [{}]\n",
			[]string{"metadata.name: Required value", "spec.containers[0].name: Required value", "spec.containers[0].image: Required value",
				"spec.terminationGracePeriodSeconds: Invalid value: -5", `spec.restartPolicy: Unsupported value: "x"`}},
		{"every problem of object meta at once", strings.Replace(validPod, "{name: p}", "{name: p, uid: a/b, labels: {'a b': x}, annotations: {'c d': y}}", 1),
			[]string{"metadata.uid: Invalid value", "metadata.labels: Invalid value", "metadata.annotations: Invalid value"}},

		// Names and UIDs end up in paths (the pod's log directory).
		{"uid escaping its directory", strings.Replace(validPod, "{name: p}", "{name: p, uid: x/../../../escaped}", 1),
			[]string{`metadata.uid: Invalid value: "x/../../../escaped": must not contain a path separator`, `metadata.uid: Invalid value: "x/../../../escaped": must not contain ".."`}},
		{"uid ..", strings.Replace(validPod, "{name: p}", "{name: p, uid: ..}", 1), []string{`metadata.uid: Invalid value: "..": must not contain ".."`}},
		{"uid with a backslash", strings.Replace(validPod, "{name: p}", `{name: p, uid: 'a\b'}`, 1), []string{"metadata.uid", "path separator"}},
		{"uid with a control character", strings.Replace(validPod, "{name: p}", `{name: p, uid: "a\nb"}`, 1), []string{`metadata.uid: Invalid value: "a\nb": must not contain control characters`}},
		{"uid with a space", strings.Replace(validPod, "{name: p}", "{name: p, uid: 'a b'}", 1), []string{`metadata.uid: Invalid value: "a b": must consist of letters, digits`}},
		{"uid with an underscore", strings.Replace(validPod, "{name: p}", "{name: p, uid: a_b}", 1), []string{`metadata.uid: Invalid value: "a_b"`}},
		{"uid starting with a dot", strings.Replace(validPod, "{name: p}", "{name: p, uid: .a}", 1), []string{`metadata.uid: Invalid value: ".a"`, "start and end with a letter or digit"}},
		{"uid too long", strings.Replace(validPod, "{name: p}", "{name: p, uid: "+strings.Repeat("a", 129)+"}", 1), []string{"metadata.uid: Too long: may not be more than 128"}},
		{"name too long with the node name", strings.Replace(validPod, "{name: p}", "{name: "+strings.Repeat("a", 250)+"}", 1),
			[]string{"metadata.name: Invalid value", "must be no more than 253 characters", "with the node name appended"}},

		// The apiserver's rules for object meta.
		{"bad label key", strings.Replace(validPod, "{name: p}", "{name: p, labels: {'-a': x}}", 1), []string{`metadata.labels: Invalid value: "-a"`}},
		{"bad label value", strings.Replace(validPod, "{name: p}", "{name: p, labels: {a: 'x y'}}", 1), []string{`metadata.labels: Invalid value: "x y"`}},
		{"long label value is not repeated whole", strings.Replace(validPod, "{name: p}", "{name: p, labels: {a: "+strings.Repeat("x", 5000)+"}}", 1),
			[]string{"metadata.labels: Invalid value", "... (5000 bytes)", "must be no more than 63 bytes"}},
		{"bad annotation key", strings.Replace(validPod, "{name: p}", "{name: p, annotations: {'a/b/c': x}}", 1), []string{`metadata.annotations: Invalid value: "a/b/c"`}},
		{"annotations over 256 KiB", strings.Replace(validPod, "{name: p}", "{name: p, annotations: {a: "+strings.Repeat("x", 256<<10)+"}}", 1),
			[]string{"metadata.annotations: Too long: may not be more than 262144 bytes"}},

		// Periods the agent turns into a time.Duration.
		{"grace period the runtime cannot represent", validPod + "  terminationGracePeriodSeconds: 9300000000\n",
			[]string{"spec.terminationGracePeriodSeconds: Invalid value: 9300000000: must be at most 9223285636 (the longest period the runtime can represent)"}},
		{"grace period one over the limit", validPod + "  terminationGracePeriodSeconds: 9223285637\n", []string{"spec.terminationGracePeriodSeconds: Invalid value: 9223285637"}},
		{"activeDeadlineSeconds 0", validPod + "  activeDeadlineSeconds: 0\n", []string{"spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647"}},
		{"activeDeadlineSeconds too long", validPod + "  activeDeadlineSeconds: 9300000000\n", []string{"spec.activeDeadlineSeconds: Invalid value: 9300000000"}},

		// Quantities, named by their field.
		{"bad quantity", strings.Replace(validPod, "image: busybox", "image: busybox, resources: {limits: {memory: 12XB}}", 1),
			[]string{`spec.containers[0].resources.limits[memory]: Invalid value: "12XB": quantities must match`}},
		{"every bad quantity at once", strings.Replace(validPod, "image: busybox", "image: busybox, resources: {requests: {cpu: 1x, memory: 1Mi}}", 1) +
			"  initContainers: [{name: i, image: a, resources: {limits: {cpu: [1]}}}]\n" +
			"  overhead: {cpu: 1..5}\n" +
			"  volumes: [{name: v, emptyDir: {sizeLimit: 2 Gi}}]\n",
			[]string{`spec.containers[0].resources.requests[cpu]: Invalid value: "1x"`, `spec.initContainers[0].resources.limits[cpu]: Invalid value: "[1]"`,
				`spec.overhead[cpu]: Invalid value: "1..5"`, `spec.volumes[0].emptyDir.sizeLimit: Invalid value: "2 Gi"`}},
		{"negative quantity", strings.Replace(validPod, "image: busybox", "image: busybox, resources: {requests: {cpu: '-1'}}", 1),
			[]string{`spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`}},
		{"request over its limit", strings.Replace(validPod, "image: busybox", "image: busybox, resources: {requests: {memory: 2Gi}, limits: {memory: 1Gi}}", 1),
			[]string{`spec.containers[0].resources.requests[memory]: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`}},
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

// Container restart policies and rules as the API server accepts them
// (ContainerRestartRules): on regular and init containers.
func TestDecodeContainerRestartRules(t *testing.T) {
	const node = "node-1"
	pod := mustDecode(t, "/m/p.yaml", []byte(strings.Replace(validPod, "image: busybox",
		"image: busybox, restartPolicy: Never, restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [42]}}, {action: Restart, exitCodes: {operator: NotIn, values: [0, 1]}}]", 1)+
		"  initContainers: [{name: i, image: a, restartPolicy: OnFailure}]\n"), node)
	c := pod.Spec.Containers[0]
	if c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyNever || len(c.RestartPolicyRules) != 2 ||
		c.RestartPolicyRules[1].ExitCodes.Operator != v1.ContainerRestartRuleOnExitCodesOpNotIn {
		t.Errorf("container restart policy %v rules %+v", c.RestartPolicy, c.RestartPolicyRules)
	}
	if p := pod.Spec.InitContainers[0].RestartPolicy; p == nil || *p != v1.ContainerRestartPolicyOnFailure {
		t.Errorf("init container restart policy %v", p)
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

// What the apiserver would carry is accepted, up to the limits.
func TestDecodeAcceptsValidValues(t *testing.T) {
	for _, c := range []struct{ name, manifest string }{
		{"a UUID", strings.Replace(validPod, "{name: p}", "{name: p, uid: 2F7A3C1E-0000-4000-8000-000000000001}", 1)},
		{"a derived UID", strings.Replace(validPod, "{name: p}", "{name: p, uid: 0123456789abcdef0123456789abcdef}", 1)},
		{"a dotted UID", strings.Replace(validPod, "{name: p}", "{name: p, uid: etcd.static-1}", 1)},
		{"a UID of 128 characters", strings.Replace(validPod, "{name: p}", "{name: p, uid: "+strings.Repeat("a", 128)+"}", 1)},
		{"labels and annotations", strings.Replace(validPod, "{name: p}", "{name: p, labels: {example.com/app: web}, annotations: {example.com/note: 'any text: at all'}}", 1)},
		{"annotations of 256 KiB", strings.Replace(validPod, "{name: p}", "{name: p, annotations: {a: "+strings.Repeat("x", 256<<10-1)+"}}", 1)},
		{"the longest grace period", validPod + "  terminationGracePeriodSeconds: 9223285636\n"},
		{"the longest active deadline", validPod + "  activeDeadlineSeconds: 2147483647\n"},
		{"quantities as numbers and strings", strings.Replace(validPod, "image: busybox", "image: busybox, resources: {requests: {cpu: 0.5, memory: 1e3}, limits: {cpu: '1', memory: 1Ki}}", 1)},
		{"a fileKeyRef to an emptyDir", strings.Replace(validPod, "image: busybox", "image: busybox, env: [{name: A, valueFrom: {fileKeyRef: {volumeName: v, path: sub/a.env, key: 'a.b-c', optional: true}}}]", 1) +
			"  volumes: [{name: v, emptyDir: {}}]\n"},
		{"a pod as kubectl get prints it", string(readFixture(t, "kubectl-get.yaml"))},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustDecode(t, "/m/p.yaml", []byte(c.manifest), node)
		})
	}
}

// A static pod cannot have its name generated: the error says so rather
// than offering generateName.
func TestDecodeGenerateNameIsNoName(t *testing.T) {
	_, err := Decode("/m/p.yaml", []byte(strings.Replace(validPod, "{name: p}", "{generateName: p-}", 1)), node)
	if err == nil || !strings.Contains(err.Error(), "metadata.name: Required value: a static pod must be named") || strings.Contains(err.Error(), "generateName was specified") {
		t.Errorf("err = %v, want only that the name is required", err)
	}
}
