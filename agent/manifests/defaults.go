package manifests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/kubetypes"
)

// contentUID derives a UID from the pod as written, the node and the path,
// as the kubelet does: an unchanged manifest keeps its UID across scans and
// restarts, and any change to it makes a new pod. The pod is hashed in its
// canonical JSON form, so comments, formatting and 0.5 vs 500m do not count.
func contentUID(pod *v1.Pod, path, nodeName string) (types.UID, error) {
	canonical, err := json.Marshal(pod)
	if err != nil {
		return "", fmt.Errorf("hashing the pod: %w", err)
	}
	h := sha256.New()
	h.Write(canonical)
	fmt.Fprintf(h, "\x00host:%s\x00file:%s", nodeName, path)
	return types.UID(hex.EncodeToString(h.Sum(nil)[:16])), nil
}

// podName is the name the kubelet gives a static pod: the manifest's name
// with "-" and the lower-cased node name appended, so the same manifest on
// two nodes gives two distinct (mirror) pods.
func podName(name, nodeName string) string { return name + "-" + strings.ToLower(nodeName) }

// applyDefaults does what the kubelet's file source (applyDefaults in
// pkg/kubelet/config/common.go) and the apiserver's defaulting would do to a
// pod that has a UID and passed validate.
func applyDefaults(pod *v1.Pod, nodeName string) {
	pod.Name = podName(pod.Name, nodeName)
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.Spec.NodeName = nodeName
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[kubetypes.ConfigSourceAnnotation] = kubetypes.SourceFile
	pod.Annotations[kubetypes.ConfigHashAnnotation] = string(pod.UID)
	// A static pod must not be evicted by NoExecute taints (node problems).
	addToleration(pod, v1.Toleration{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute})
	// Status is the agent's to compute; a manifest copied from
	// `kubectl get -o yaml` must not make a new pod look terminal.
	pod.Status = v1.PodStatus{Phase: v1.PodPending}

	s := &pod.Spec
	if s.RestartPolicy == "" {
		s.RestartPolicy = v1.RestartPolicyAlways
	}
	if s.TerminationGracePeriodSeconds == nil {
		g := int64(v1.DefaultTerminationGracePeriodSeconds)
		s.TerminationGracePeriodSeconds = &g
	}
	if s.DNSPolicy == "" {
		s.DNSPolicy = v1.DNSClusterFirst
	}
	for i := range s.InitContainers {
		defaultContainer(&s.InitContainers[i])
	}
	for i := range s.Containers {
		defaultContainer(&s.Containers[i])
	}
}

func addToleration(pod *v1.Pod, t v1.Toleration) {
	for _, have := range pod.Spec.Tolerations {
		if have.MatchToleration(&t) {
			return
		}
	}
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, t)
}

func defaultContainer(c *v1.Container) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = v1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
}

// defaultPullPolicy is the API's default: Always for an image tagged latest
// or not tagged at all (which means latest), IfNotPresent otherwise. An image
// pinned by digest only is IfNotPresent: the digest cannot change under it.
func defaultPullPolicy(image string) v1.PullPolicy {
	ref, digested := image, false
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref, digested = ref[:i], true
	}
	tag := ""
	// A colon before the last slash is a registry port, not a tag.
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		tag = ref[i+1:]
	}
	if tag == "latest" || (tag == "" && !digested) {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}
