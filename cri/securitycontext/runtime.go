package securitycontext

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RuntimeFeatures are what the CRI runtime's Status says it supports
// (the kubelet reads them into its runtime state). An old runtime
// (containerd 1.6) reports none: every field is false.
type RuntimeFeatures struct {
	// SupplementalGroupsPolicy: the runtime honours
	// supplementalGroupsPolicy Strict.
	SupplementalGroupsPolicy bool
	// UserNamespaces are the runtime handlers that support user
	// namespaces, by name ("" is the default handler).
	UserNamespaces map[string]bool
	// RecursiveReadOnly are the runtime handlers that support recursive
	// read-only mounts, by name.
	RecursiveReadOnly map[string]bool
	// Handlers are the runtime handlers' names, as the runtime lists them.
	Handlers []string
}

// NodeRuntimeHandlers are the handlers and their features as the Node's
// status shows them (the kubelet's nodestatus.RuntimeHandlers).
func (f RuntimeFeatures) NodeRuntimeHandlers() []v1.NodeRuntimeHandler {
	var out []v1.NodeRuntimeHandler
	for _, name := range f.Handlers {
		rro, userns := f.RecursiveReadOnly[name], f.UserNamespaces[name]
		out = append(out, v1.NodeRuntimeHandler{Name: name, Features: &v1.NodeRuntimeHandlerFeatures{
			RecursiveReadOnlyMounts: &rro, UserNamespaces: &userns,
		}})
	}
	return out
}

// FeaturesOf reads the features from a Status response.
func FeaturesOf(resp *runtimeapi.StatusResponse) RuntimeFeatures {
	f := RuntimeFeatures{
		SupplementalGroupsPolicy: resp.GetFeatures().GetSupplementalGroupsPolicy(),
		UserNamespaces:           map[string]bool{},
		RecursiveReadOnly:        map[string]bool{},
	}
	for _, h := range resp.GetRuntimeHandlers() {
		f.Handlers = append(f.Handlers, h.GetName())
		if h.GetFeatures().GetUserNamespaces() {
			f.UserNamespaces[h.GetName()] = true
		}
		if h.GetFeatures().GetRecursiveReadOnlyMounts() {
			f.RecursiveReadOnly[h.GetName()] = true
		}
	}
	return f
}

// ErrStrictGroupsNotSupported is the kubelet's admission message for a pod
// asking supplementalGroupsPolicy Strict of a runtime that does not
// support it (reason SupplementalGroupsPolicyNotSupported).
var ErrStrictGroupsNotSupported = fmt.Errorf("SupplementalGroupsPolicy=%s is not supported in this node", v1.SupplementalGroupsPolicyStrict)

// StrictGroupsRefused reports whether pod asks supplementalGroupsPolicy
// Strict and the runtime cannot honour it.
func StrictGroupsRefused(pod *v1.Pod, f RuntimeFeatures) bool {
	psc := pod.Spec.SecurityContext
	return psc != nil && psc.SupplementalGroupsPolicy != nil &&
		*psc.SupplementalGroupsPolicy == v1.SupplementalGroupsPolicyStrict && !f.SupplementalGroupsPolicy
}

// UserNamespaceRefusal is why a pod with hostUsers false is not run, or
// nil for a pod that shares the node's user namespace. With a runtime that
// has no handler supporting user namespaces it is the kubelet's message;
// with one that has, podlife still refuses: it does not allocate the
// pod's UID and GID ranges, which the kubelet's user namespace manager
// does.
func UserNamespaceRefusal(pod *v1.Pod, f RuntimeFeatures) error {
	if pod.Spec.HostUsers == nil || *pod.Spec.HostUsers {
		return nil
	}
	if len(f.UserNamespaces) == 0 {
		return errors.New("can't set `spec.hostUsers: false`, runtime does not support user namespaces")
	}
	return errors.New("can't set `spec.hostUsers: false`: podlife does not allocate the user namespace ID mappings a pod of its own user namespace needs")
}
