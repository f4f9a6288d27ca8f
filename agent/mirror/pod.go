package mirror

import (
	"fmt"
	"maps"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/kubetypes"
)

// staticHash is the static pod's kubernetes.io/config.hash, which its
// mirror carries as kubernetes.io/config.mirror.
func staticHash(static *v1.Pod) (string, error) {
	hash := static.Annotations[kubetypes.ConfigHashAnnotation]
	if hash == "" {
		return "", fmt.Errorf("static pod %s/%s (UID %s) has no %s annotation: no mirror pod for it",
			static.Namespace, static.Name, static.UID, kubetypes.ConfigHashAnnotation)
	}
	return hash, nil
}

// newMirrorPod is the mirror of static for the node, as the kubelet's
// CreateMirrorPod makes it: the static pod's name, namespace, labels and
// annotations, the mirror annotation set to the static pod's hash, its spec
// bound to the node, and the Node as its controller (NodeRestriction
// accepts a mirror pod from a node only so).
func newMirrorPod(static *v1.Pod, hash string, node *v1.Node) *v1.Pod {
	annotations := maps.Clone(static.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[v1.MirrorPodAnnotationKey] = hash
	controller := true
	mirror := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        static.Name,
			Namespace:   static.Namespace,
			Labels:      maps.Clone(static.Labels),
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1.SchemeGroupVersion.String(),
				Kind:       "Node",
				Name:       node.Name,
				UID:        node.UID,
				Controller: &controller,
			}},
		},
		Spec: *static.Spec.DeepCopy(),
	}
	mirror.Spec.NodeName = node.Name
	return mirror
}

// isMirrorOf reports whether mirror is the live mirror of the static pod
// with hash, owned by the Node with nodeUID (IsMirrorPodOf in the kubelet,
// and a mirror it is deleting counts as none). A mirror owned by an older
// Node of the same name (the node was re-registered) is not: the garbage
// collector would delete it.
func isMirrorOf(mirror *v1.Pod, hash string, nodeUID types.UID) bool {
	if mirror.DeletionTimestamp != nil || mirror.Annotations[v1.MirrorPodAnnotationKey] != hash {
		return false
	}
	owner := metav1.GetControllerOf(mirror)
	return owner != nil && owner.Kind == "Node" && owner.UID == nodeUID
}
