package admission

import (
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri/securitycontext"
)

// The kubelet's reasons for pods whose security the node cannot enforce.
const (
	ReasonAppArmor                             = "AppArmor"
	ReasonSupplementalGroupsPolicyNotSupported = "SupplementalGroupsPolicyNotSupported"
)

// AppArmorAdmitter rejects a pod asking for an AppArmor profile (other
// than Unconfined) on a node without AppArmor, as the kubelet's AppArmor
// admit handler does; with AppArmor, a Localhost profile without a name.
type AppArmorAdmitter struct {
	// hostErr is why the node cannot enforce profiles; nil when it can.
	hostErr error
}

// NewAppArmorAdmitter returns the admitter for a node on which AppArmor
// is enabled or not.
func NewAppArmorAdmitter(enabled bool) *AppArmorAdmitter {
	if enabled {
		return &AppArmorAdmitter{}
	}
	return &AppArmorAdmitter{hostErr: errors.New("AppArmor is not enabled on the host")}
}

// Admit checks a pod that has not run yet. The kubelet checks only pods
// in phase Pending; a static pod has no phase at first, and is checked
// too.
func (a *AppArmorAdmitter) Admit(pod *v1.Pod, _ []*v1.Pod) Result {
	if p := pod.Status.Phase; p != v1.PodPending && p != "" {
		return Result{Admit: true}
	}
	if err := a.validate(pod); err != nil {
		return Result{Reason: ReasonAppArmor, Message: fmt.Sprintf("Cannot enforce AppArmor: %v", err)}
	}
	return Result{Admit: true}
}

func (a *AppArmorAdmitter) validate(pod *v1.Pod) error {
	if !securitycontext.AppArmorRequired(pod) {
		return nil
	}
	if a.hostErr != nil {
		return a.hostErr
	}
	all := append(append([]v1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...)
	for i := range pod.Spec.EphemeralContainers {
		all = append(all, v1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	for _, cs := range [][]v1.Container{all} {
		for i := range cs {
			p := securitycontext.AppArmorProfile(pod, &cs[i])
			if p != nil && p.Type == v1.AppArmorProfileTypeLocalhost && (p.LocalhostProfile == nil || strings.TrimSpace(*p.LocalhostProfile) == "") {
				return fmt.Errorf("invalid empty AppArmor profile name: %q", p)
			}
		}
	}
	return nil
}

// GroupsPolicyAdmitter rejects a pod asking supplementalGroupsPolicy
// Strict of a runtime that does not support it, as the kubelet's
// predicate does from the node's features.
type GroupsPolicyAdmitter struct {
	features securitycontext.RuntimeFeatures
}

// NewGroupsPolicyAdmitter returns the admitter for a runtime with
// features.
func NewGroupsPolicyAdmitter(features securitycontext.RuntimeFeatures) *GroupsPolicyAdmitter {
	return &GroupsPolicyAdmitter{features: features}
}

// Admit implements Handler.
func (a *GroupsPolicyAdmitter) Admit(pod *v1.Pod, _ []*v1.Pod) Result {
	if securitycontext.StrictGroupsRefused(pod, a.features) {
		return Result{Reason: ReasonSupplementalGroupsPolicyNotSupported, Message: securitycontext.ErrStrictGroupsNotSupported.Error()}
	}
	return Result{Admit: true}
}
