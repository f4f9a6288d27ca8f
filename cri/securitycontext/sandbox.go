package securitycontext

import (
	v1 "k8s.io/api/core/v1"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Namespaces are the pod's namespaces, on its sandbox and each of its
// containers alike (the kubelet's NamespacesForPod): the node's network
// with hostNetwork, the node's IPC namespace with hostIPC, else the
// pod's; the node's PID namespace with hostPID, the pod's with
// shareProcessNamespace, else one per container, so that each container's
// first process is its PID 1 (NamespaceMode_POD is the CRI's zero value:
// a config that left the mode out would share the sandbox's, where the
// pause process is PID 1).
func Namespaces(pod *v1.Pod) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{
		Network: runtimeapi.NamespaceMode_POD,
		Pid:     runtimeapi.NamespaceMode_CONTAINER,
		Ipc:     runtimeapi.NamespaceMode_POD,
	}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	if pod.Spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	switch {
	case pod.Spec.HostPID:
		ns.Pid = runtimeapi.NamespaceMode_NODE
	case pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace:
		ns.Pid = runtimeapi.NamespaceMode_POD
	}
	return ns
}

// Sandbox is the sandbox's Linux security context, as the kubelet's
// generatePodSandboxLinuxConfig makes it: the pod's namespaces, user,
// group, supplemental groups (fsGroup first) and their policy, SELinux
// options; privileged when any container is (a privileged container needs
// a privileged sandbox); the runtime's default seccomp profile, which the
// kubelet gives every sandbox whatever its containers ask.
func Sandbox(pod *v1.Pod) (*runtimeapi.LinuxSandboxSecurityContext, error) {
	sc := &runtimeapi.LinuxSandboxSecurityContext{
		NamespaceOptions: Namespaces(pod),
		Privileged:       HasPrivilegedContainer(pod),
		Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
	}
	psc := pod.Spec.SecurityContext
	if psc == nil {
		return sc, nil
	}
	sc.RunAsUser = int64Value(psc.RunAsUser)
	sc.RunAsGroup = int64Value(psc.RunAsGroup)
	sc.SupplementalGroups = supplementalGroups(psc)
	sc.SelinuxOptions = seLinuxOption(psc.SELinuxOptions)
	var err error
	sc.SupplementalGroupsPolicy, err = groupsPolicy(psc)
	return sc, err
}

// Sysctls are the pod's sysctls for its sandbox, their names with dots as
// separators: runc checks that a sysctl is namespaced by its dotted name,
// so "net/ipv4/ip_forward" would be refused (the kubelet's
// ConvertPodSysctlsVariableToDotsSeparator). nil when there are none.
func Sysctls(pod *v1.Pod) map[string]string {
	psc := pod.Spec.SecurityContext
	if psc == nil || len(psc.Sysctls) == 0 {
		return nil
	}
	out := make(map[string]string, len(psc.Sysctls))
	for _, s := range psc.Sysctls {
		out[utilsysctl.NormalizeName(s.Name)] = s.Value
	}
	return out
}

// HasPrivilegedContainer reports whether any container of pod, init and
// ephemeral ones included, is privileged.
func HasPrivilegedContainer(pod *v1.Pod) bool {
	privileged := func(sc *v1.SecurityContext) bool { return sc != nil && sc.Privileged != nil && *sc.Privileged }
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if privileged(cs[i].SecurityContext) {
				return true
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if privileged(pod.Spec.EphemeralContainers[i].SecurityContext) {
			return true
		}
	}
	return false
}
