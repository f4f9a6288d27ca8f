package securitycontext

import (
	v1 "k8s.io/api/core/v1"
)

// Effective is the container's security context with the pod's merged
// under it, as the kubelet's DetermineEffectiveSecurityContext makes it:
// the pod gives seLinuxOptions, windowsOptions, runAsUser, runAsGroup and
// runAsNonRoot; the container's own fields win. The result is a copy: it
// never aliases the pod's.
func Effective(pod *v1.Pod, c *v1.Container) *v1.SecurityContext {
	sc := &v1.SecurityContext{}
	if psc := pod.Spec.SecurityContext; psc != nil {
		sc.SELinuxOptions = psc.SELinuxOptions.DeepCopy()
		sc.WindowsOptions = psc.WindowsOptions.DeepCopy()
		sc.RunAsUser = copyPtr(psc.RunAsUser)
		sc.RunAsGroup = copyPtr(psc.RunAsGroup)
		sc.RunAsNonRoot = copyPtr(psc.RunAsNonRoot)
	}
	csc := c.SecurityContext
	if csc == nil {
		return sc
	}
	if csc.SELinuxOptions != nil {
		sc.SELinuxOptions = csc.SELinuxOptions.DeepCopy()
	}
	if w := csc.WindowsOptions; w != nil {
		// Windows only, and merged field by field there; kept so that the
		// result is the kubelet's, though nothing on Linux reads it.
		if sc.WindowsOptions == nil {
			sc.WindowsOptions = &v1.WindowsSecurityContextOptions{}
		}
		if w.GMSACredentialSpecName != nil || w.GMSACredentialSpec != nil {
			sc.WindowsOptions.GMSACredentialSpecName = copyPtr(w.GMSACredentialSpecName)
			sc.WindowsOptions.GMSACredentialSpec = copyPtr(w.GMSACredentialSpec)
		}
		if w.RunAsUserName != nil {
			sc.WindowsOptions.RunAsUserName = copyPtr(w.RunAsUserName)
		}
		if w.HostProcess != nil {
			sc.WindowsOptions.HostProcess = copyPtr(w.HostProcess)
		}
	}
	if csc.Capabilities != nil {
		sc.Capabilities = csc.Capabilities.DeepCopy()
	}
	override(&sc.Privileged, csc.Privileged)
	override(&sc.RunAsUser, csc.RunAsUser)
	override(&sc.RunAsGroup, csc.RunAsGroup)
	override(&sc.RunAsNonRoot, csc.RunAsNonRoot)
	override(&sc.ReadOnlyRootFilesystem, csc.ReadOnlyRootFilesystem)
	override(&sc.AllowPrivilegeEscalation, csc.AllowPrivilegeEscalation)
	override(&sc.ProcMount, csc.ProcMount)
	// seccompProfile and appArmorProfile are not merged here: the
	// kubelet reads them from the container, the annotations and the
	// pod in its own order (Seccomp, AppArmor).
	return sc
}

// override sets *dst to a copy of src when src is set.
func override[T any](dst **T, src *T) {
	if src != nil {
		*dst = copyPtr(src)
	}
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
