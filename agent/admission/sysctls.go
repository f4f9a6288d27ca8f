package admission

import (
	"fmt"
	"regexp"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
)

// ReasonSysctlForbidden is the kubelet's reason for a pod whose sysctls
// are not allowed on the node.
const ReasonSysctlForbidden = "SysctlForbidden"

// safeSysctls are the kubelet's safe sysctls (pkg/kubelet/sysctl): each
// is namespaced and isolated, so a pod setting it affects no other pod.
// Some are namespaced only from a kernel version on; on an older kernel
// they are not safe.
var safeSysctls = []struct{ name, kernel string }{
	{"kernel.shm_rmid_forced", ""},
	{"net.ipv4.ip_local_port_range", ""},
	{"net.ipv4.tcp_syncookies", ""},
	{"net.ipv4.ping_group_range", ""},
	{"net.ipv4.ip_unprivileged_port_start", ""},
	{"net.ipv4.ip_local_reserved_ports", "3.16"},
	{"net.ipv4.tcp_keepalive_time", "4.5"},
	{"net.ipv4.tcp_fin_timeout", "4.6"},
	{"net.ipv4.tcp_keepalive_intvl", "4.5"},
	{"net.ipv4.tcp_keepalive_probes", "4.5"},
	{"net.ipv4.tcp_rmem", "4.15"},
	{"net.ipv4.tcp_wmem", "4.15"},
	{"net.ipv4.tcp_slow_start_after_idle", "4.15"},
	{"net.ipv4.tcp_notsent_lowat", "4.6"},
}

// SafeSysctls are the safe sysctls on a node running kernel; a nil kernel
// (unknown) leaves out those that need a version.
func SafeSysctls(kernel *version.Version) []string {
	var names []string
	for _, s := range safeSysctls {
		if s.kernel == "" || kernel != nil && kernel.AtLeast(version.MustParseGeneric(s.kernel)) {
			names = append(names, s.name)
		}
	}
	return names
}

// sysctlMaxLength and sysctlPattern are the API's validation of a sysctl
// pattern: dot- or slash-separated segments, the last of which may end in
// "*".
const sysctlMaxLength = 253

var sysctlPattern = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]$`)

// SysctlAdmitter rejects a pod that sets a sysctl neither safe nor allowed
// by the node's --allowed-unsafe-sysctls, or a sysctl of a namespace the pod
// shares with the node (a net.* sysctl with hostNetwork, an IPC one with
// hostIPC), as the kubelet's sysctl allowlist does.
type SysctlAdmitter struct {
	sysctls  map[string]utilsysctl.Namespace
	prefixes map[string]utilsysctl.Namespace
}

// NewSysctlAdmitter allows the names and patterns ("kernel.msg*") given:
// the safe sysctls and the node's allowed unsafe ones. A pattern that is
// malformed, or names sysctls not known to be namespaced (which a pod
// could not set without changing the node), is an error.
func NewSysctlAdmitter(patterns []string) (*SysctlAdmitter, error) {
	a := &SysctlAdmitter{sysctls: map[string]utilsysctl.Namespace{}, prefixes: map[string]utilsysctl.Namespace{}}
	for _, p := range patterns {
		if len(p) > sysctlMaxLength || !sysctlPattern.MatchString(p) {
			return nil, fmt.Errorf("sysctl %q must have at most %d characters and match regex %s", p, sysctlMaxLength, sysctlPattern)
		}
		ns, sysctlOrPrefix, prefixed := utilsysctl.GetNamespace(p)
		if ns == utilsysctl.UnknownNamespace {
			return nil, fmt.Errorf("the sysctls %q are not known to be namespaced", sysctlOrPrefix)
		}
		if prefixed {
			a.prefixes[sysctlOrPrefix] = ns
		} else {
			a.sysctls[sysctlOrPrefix] = ns
		}
	}
	return a, nil
}

// Admit checks every sysctl of the pod, with the kubelet's reason and
// message for the first one refused.
func (a *SysctlAdmitter) Admit(pod *v1.Pod, _ []*v1.Pod) Result {
	psc := pod.Spec.SecurityContext
	if psc == nil {
		return Result{Admit: true}
	}
	hostUsers := pod.Spec.HostUsers == nil || *pod.Spec.HostUsers
	for _, s := range psc.Sysctls {
		if err := a.check(s.Name, pod.Spec.HostNetwork, pod.Spec.HostIPC, hostUsers); err != nil {
			return Result{Reason: ReasonSysctlForbidden, Message: fmt.Sprintf("forbidden sysctl: %v", err)}
		}
	}
	return Result{Admit: true}
}

// check allows sysctl when listed (or matched by a pattern) and its
// namespace is the pod's own.
func (a *SysctlAdmitter) check(sysctl string, hostNet, hostIPC, hostUsers bool) error {
	sysctl = utilsysctl.NormalizeName(sysctl)
	ns, found := a.sysctls[sysctl]
	if !found {
		for p, pns := range a.prefixes {
			if strings.HasPrefix(sysctl, p) {
				ns, found = pns, true
				break
			}
		}
	}
	if !found {
		return fmt.Errorf("%q not allowlisted", sysctl)
	}
	if ns == utilsysctl.IPCNamespace && hostIPC || ns == utilsysctl.NetNamespace && hostNet || ns == utilsysctl.UserNamespace && hostUsers {
		return fmt.Errorf("%q not allowed with host %s enabled", sysctl, ns)
	}
	return nil
}
