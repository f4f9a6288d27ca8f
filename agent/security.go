package agent

import (
	"os"
	"runtime"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/podlife/podlife/agent/admission"
	"github.com/podlife/podlife/cri/kuberuntime"
)

// admissionChain is the agent's admission: node shutdown first, then in
// the kubelet's order the sysctls (the safe ones for this kernel and the
// allowed unsafe ones), the fields podlife refuses and the volume file
// paths the API server refuses, supplementalGroupsPolicy Strict on this
// runtime, the device plugins' devices (its resource allocator) and the
// resources (its predicate), AppArmor profiles on this host.
func (a *Agent) admissionChain(allocatable admission.Resources) (*admission.Chain, error) {
	sysctls, err := admission.NewSysctlAdmitter(append(admission.SafeSysctls(kernelVersion()), a.cfg.AllowedUnsafeSysctls...))
	if err != nil {
		return nil, err
	}
	// podlife declares no node feature (NodeDeclaredFeatures): a pod that
	// needs one (a RestartAllContainers restart rule...) is refused, last,
	// as the kubelet orders its handlers.
	features, err := admission.NewDeclaredFeatures(nil, agentVersion())
	if err != nil {
		return nil, err
	}
	return admission.NewChain(a.registry,
		a.shutdown,
		sysctls,
		admission.PodOS(runtime.GOOS),
		admission.PodFields(),
		admission.VolumePaths(),
		admission.NewGroupsPolicyAdmitter(a.conn.features),
		a.deviceAdmitter(),
		admission.NewResourceAdmitter(allocatable, a.cfg.MaxPods),
		admission.NodeAffinity(a.admissionNode),
		admission.NewAppArmorAdmitter(appArmorEnabled()),
		features,
	), nil
}

// runtimeClasses is the syncer's RuntimeClass lookup: nil standalone.
func (a *Agent) runtimeClasses() kuberuntime.RuntimeClassGetter {
	if a.cluster == nil {
		return nil
	}
	return a.cluster.runtimeClasses
}

// kernelVersion is the running kernel's version, nil when unknown (the
// kubelet reads the same file).
func kernelVersion() *version.Version {
	data, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return nil
	}
	v, err := version.ParseGeneric(strings.TrimSpace(string(data)))
	if err != nil {
		return nil
	}
	return v
}

// appArmorEnabled reports whether the host enforces AppArmor profiles, as
// the kubelet reads it: the securityfs directory exists and the module's
// enabled parameter is Y.
func appArmorEnabled() bool {
	if _, err := os.Stat("/sys/kernel/security/apparmor"); err != nil {
		return false
	}
	buf, err := os.ReadFile("/sys/module/apparmor/parameters/enabled")
	return err == nil && len(buf) > 1 && buf[0] == 'Y'
}
