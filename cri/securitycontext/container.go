package securitycontext

import (
	"fmt"
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Options are the node's settings that decide part of a container's
// context.
type Options struct {
	// SeccompProfileRoot is the directory a Localhost seccomp profile is
	// relative to (the kubelet's <root-dir>/seccomp).
	SeccompProfileRoot string
	// SeccompDefault makes RuntimeDefault the profile of a container that
	// names none (the kubelet's --seccomp-default); else it is Unconfined.
	SeccompDefault bool
}

// ImageUser is the user an image runs as, from the runtime's ImageStatus:
// a numeric UID, or a user name the image's /etc/passwd resolves.
type ImageUser struct {
	UID      *int64
	Username string
}

// ImageUserOf is the image's user as the kubelet's getImageUser reads it:
// an image that names none runs as root (UID 0).
func ImageUserOf(img *runtimeapi.Image) ImageUser {
	if img != nil {
		if img.Uid != nil {
			uid := img.Uid.Value
			return ImageUser{UID: &uid}
		}
		if img.Username != "" {
			return ImageUser{Username: img.Username}
		}
	}
	return ImageUser{UID: new(int64)}
}

// Container is container c's Linux security context, as the kubelet's
// determineEffectiveSecurityContext makes it: the effective context's
// user, group, capabilities, privileged, read-only root, SELinux options,
// no_new_privs and /proc paths; the seccomp and AppArmor profiles; the
// image's user when no runAsUser is set; the pod's supplemental groups
// (fsGroup first, as the kubelet adds it) and their policy; and the pod's
// namespaces.
func Container(pod *v1.Pod, c *v1.Container, img ImageUser, opts Options) (*runtimeapi.LinuxContainerSecurityContext, error) {
	eff := Effective(pod, c)
	sc := &runtimeapi.LinuxContainerSecurityContext{
		Capabilities:   capabilities(eff.Capabilities),
		SelinuxOptions: seLinuxOption(eff.SELinuxOptions),
		RunAsUser:      int64Value(eff.RunAsUser),
		RunAsGroup:     int64Value(eff.RunAsGroup),
		NoNewPrivs:     NoNewPrivileges(eff),
		MaskedPaths:    MaskedPaths(eff.ProcMount),
		ReadonlyPaths:  ReadonlyPaths(eff.ProcMount),
		// windowsOptions are the Windows runtime's: the kubelet passes
		// none of them to a Linux container, and neither does podlife.
	}
	if eff.Privileged != nil {
		sc.Privileged = *eff.Privileged
	}
	if eff.ReadOnlyRootFilesystem != nil {
		sc.ReadonlyRootfs = *eff.ReadOnlyRootFilesystem
	}
	var err error
	if sc.Seccomp, err = Seccomp(pod, c, opts); err != nil {
		return nil, err
	}
	// Both AppArmor fields, as the kubelet sets them: a runtime older than
	// the structured field (containerd 1.6) reads only the deprecated one.
	//lint:ignore SA1019 kept for runtimes that know only apparmor_profile
	if sc.Apparmor, sc.ApparmorProfile, err = appArmor(pod, c); err != nil {
		return nil, err
	}
	if sc.RunAsUser == nil {
		sc.RunAsUser = int64Value(img.UID)
		sc.RunAsUsername = img.Username
	}
	sc.NamespaceOptions = Namespaces(pod)
	if psc := pod.Spec.SecurityContext; psc != nil {
		sc.SupplementalGroups = supplementalGroups(psc)
		if sc.SupplementalGroupsPolicy, err = groupsPolicy(psc); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// supplementalGroups are fsGroup then supplementalGroups, in the
// container's order (the kubelet's; the sandbox's puts fsGroup first too).
func supplementalGroups(psc *v1.PodSecurityContext) []int64 {
	var groups []int64
	if psc.FSGroup != nil {
		groups = append(groups, *psc.FSGroup)
	}
	return append(groups, psc.SupplementalGroups...)
}

// groupsPolicy is the CRI's value of supplementalGroupsPolicy (Merge when
// unset, the CRI's zero value).
func groupsPolicy(psc *v1.PodSecurityContext) (runtimeapi.SupplementalGroupsPolicy, error) {
	if psc.SupplementalGroupsPolicy == nil {
		return runtimeapi.SupplementalGroupsPolicy_Merge, nil
	}
	v, ok := runtimeapi.SupplementalGroupsPolicy_value[string(*psc.SupplementalGroupsPolicy)]
	if !ok {
		return 0, fmt.Errorf("unsupported supplementalGroupsPolicy: %s", *psc.SupplementalGroupsPolicy)
	}
	return runtimeapi.SupplementalGroupsPolicy(v), nil
}

// NoNewPrivileges is the kubelet's AddNoNewPrivileges: no_new_privs is set
// exactly when allowPrivilegeEscalation is false. (API validation refuses
// false with privileged or CAP_SYS_ADMIN, so those never reach here.)
func NoNewPrivileges(eff *v1.SecurityContext) bool {
	return eff.AllowPrivilegeEscalation != nil && !*eff.AllowPrivilegeEscalation
}

// capabilities are the names the kubelet passes: the API's, as written
// ("NET_ADMIN", "ALL"); the runtime adds the CAP_ prefix.
func capabilities(c *v1.Capabilities) *runtimeapi.Capability {
	if c == nil {
		return nil
	}
	out := &runtimeapi.Capability{AddCapabilities: make([]string, len(c.Add)), DropCapabilities: make([]string, len(c.Drop))}
	for i, name := range c.Add {
		out.AddCapabilities[i] = string(name)
	}
	for i, name := range c.Drop {
		out.DropCapabilities[i] = string(name)
	}
	return out
}

func seLinuxOption(o *v1.SELinuxOptions) *runtimeapi.SELinuxOption {
	if o == nil {
		return nil
	}
	return &runtimeapi.SELinuxOption{User: o.User, Role: o.Role, Type: o.Type, Level: o.Level}
}

func int64Value(p *int64) *runtimeapi.Int64Value {
	if p == nil {
		return nil
	}
	return &runtimeapi.Int64Value{Value: *p}
}

// VerifyRunAsNonRoot refuses container c when its effective context asks
// runAsNonRoot and it would run as root, with the kubelet's messages
// (verifyRunAsNonRoot): runAsUser 0; or, without runAsUser, an image whose
// user is UID 0 (or none), a non-numeric name that cannot be checked, or an
// invalid UID.
func VerifyRunAsNonRoot(pod *v1.Pod, c *v1.Container, img ImageUser) error {
	eff := Effective(pod, c)
	if eff.RunAsNonRoot == nil || !*eff.RunAsNonRoot {
		return nil
	}
	desc := fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
	if eff.RunAsUser != nil {
		if *eff.RunAsUser == 0 {
			return fmt.Errorf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", desc, c.Name)
		}
		return nil
	}
	switch {
	case img.UID == nil && img.Username != "":
		return fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)", img.Username, desc, c.Name)
	case img.UID != nil && *img.UID == 0:
		return fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", desc, c.Name)
	case img.UID != nil:
		if errs := validation.IsValidUserID(*img.UID); len(errs) > 0 {
			return fmt.Errorf("container has runAsNonRoot and image has an invalid user id (%d). (Must be 1-(%d)): %s (pod: %q, container: %s)",
				*img.UID, math.MaxInt32, strings.Join(errs, "; "), desc, c.Name)
		}
	}
	return nil
}
