package admission

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
)

// ReasonPodFeatureUnsupported is the kubelet's reason for a pod that needs
// a node feature the node does not declare.
const ReasonPodFeatureUnsupported = "PodFeatureUnsupported"

// DeclaredFeatures rejects a pod that needs a node feature the node does
// not declare, as the kubelet's declaredFeaturesAdmitHandler does: the
// NodeDeclaredFeatures registry of k8s.io/component-helpers infers what a
// pod needs (a restart rule with action RestartAllContainers, user
// namespaces with hostNetwork, bindMountOptions on a volume mount...), and
// whatever the node lacks is refused with PodFeatureUnsupported, naming the
// features. podlife implements none of them, so it declares none: such a
// pod is refused, never run without what it asked for.
type DeclaredFeatures struct {
	framework *ndf.Framework
	declared  ndf.FeatureSet
	version   *version.Version
}

// NewDeclaredFeatures returns the handler for a node that declares the
// features named, acting as Kubernetes version agentVersion (the Node's
// kubeletVersion, e.g. "v1.37.2-podlife"), which decides the features that
// still need a declaration.
func NewDeclaredFeatures(declared []string, agentVersion string) (*DeclaredFeatures, error) {
	v, err := version.ParseGeneric(agentVersion)
	if err != nil {
		return nil, fmt.Errorf("declared features: agent version %q: %w", agentVersion, err)
	}
	fw := ndf.DefaultFramework
	set, err := fw.MapSorted(declared)
	if err != nil {
		return nil, fmt.Errorf("declared features %v: %w", declared, err)
	}
	return &DeclaredFeatures{framework: fw, declared: set, version: v}, nil
}

// Admit implements Handler.
func (d *DeclaredFeatures) Admit(pod *v1.Pod, _ []*v1.Pod) Result {
	reqs, err := d.framework.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Spec, Status: &pod.Status}, d.version)
	if err != nil {
		return Result{Reason: ReasonPodFeatureUnsupported, Message: fmt.Sprintf("Failed to infer pod's feature requirements: %v", err)}
	}
	if reqs.IsEmpty() {
		return Result{Admit: true}
	}
	match, err := d.framework.MatchNodeFeatureSet(reqs, d.declared)
	if err != nil {
		return Result{Reason: ReasonPodFeatureUnsupported, Message: fmt.Sprintf("Failed to match pod's feature requirements against the node: %v", err)}
	}
	if !match.IsMatch {
		return Result{Reason: ReasonPodFeatureUnsupported,
			Message: fmt.Sprintf("Pod requires node features that are not available: %s", strings.Join(match.UnsatisfiedRequirements, ", "))}
	}
	return Result{Admit: true}
}
