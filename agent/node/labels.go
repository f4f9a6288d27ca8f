package node

import (
	"runtime"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// kubeletLabels are the labels under kubernetes.io and k8s.io that
// NodeRestriction lets a node set on itself (IsKubeletLabel in
// k8s.io/kubelet/pkg/apis).
var kubeletLabels = []string{
	v1.LabelHostname,
	v1.LabelTopologyZone,
	v1.LabelTopologyRegion,
	v1.LabelFailureDomainBetaZone,
	v1.LabelFailureDomainBetaRegion,
	v1.LabelInstanceType,
	v1.LabelInstanceTypeStable,
	v1.LabelOSStable,
	v1.LabelArchStable,
	"beta.kubernetes.io/os",
	"beta.kubernetes.io/arch",
}

// forbiddenLabels returns, sorted, the keys of labels that NodeRestriction
// would refuse from a node: those in node-restriction.kubernetes.io, and
// those under kubernetes.io or k8s.io that are not kubelet labels (in the
// list, or in kubelet.kubernetes.io or node.kubernetes.io).
func forbiddenLabels(labels map[string]string) []string {
	var forbidden []string
	for key := range labels {
		ns, _, found := strings.Cut(key, "/")
		if !found {
			continue
		}
		switch {
		case inNamespace(ns, v1.LabelNamespaceNodeRestriction):
			forbidden = append(forbidden, key)
		case (inNamespace(ns, "kubernetes.io") || inNamespace(ns, "k8s.io")) &&
			!slices.Contains(kubeletLabels, key) &&
			!inNamespace(ns, v1.LabelNamespaceSuffixKubelet) && !inNamespace(ns, v1.LabelNamespaceSuffixNode):
			forbidden = append(forbidden, key)
		}
	}
	slices.Sort(forbidden)
	return forbidden
}

// inNamespace reports whether the label prefix ns is domain or one of its
// subdomains.
func inNamespace(ns, domain string) bool {
	return ns == domain || strings.HasSuffix(ns, "."+domain)
}

// OwnLabels are the labels the Manager keeps on its Node: the kubelet's
// default labels, and the extra ones of the configuration, which override
// them as the kubelet's --node-labels do. Standalone, admission matches
// pods' node affinity against them.
func OwnLabels(nodeName string, extra map[string]string) map[string]string {
	labels := map[string]string{
		v1.LabelHostname:   nodeName,
		v1.LabelOSStable:   runtime.GOOS,
		v1.LabelArchStable: runtime.GOARCH,
	}
	for k, v := range extra {
		labels[k] = v
	}
	return labels
}
