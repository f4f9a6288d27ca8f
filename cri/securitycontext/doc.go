// Package securitycontext turns a pod's security contexts into the CRI's
// Linux security contexts, as the kubelet does (kubelet counterparts:
// pkg/securitycontext for the effective context, no_new_privs and the
// masked and read-only /proc paths; pkg/kubelet/kuberuntime's
// security_context.go, security_context_others.go (runAsNonRoot),
// kuberuntime_sandbox.go (the sandbox's context and sysctls) and
// helpers.go (seccomp and AppArmor profiles); pkg/security/apparmor for
// the profile a container gets; kuberuntime/util for the namespaces).
//
// It is pure translation: the syncer (cri/kuberuntime) calls it with the
// pod, the container and the image's user, and the agent's admission
// (agent/admission) asks it which AppArmor profile a container gets. What
// it cannot translate it names (Unapplied), so that the syncer refuses the
// pod rather than run it with less isolation than its spec asks for: the
// fields are found by reflection, so a field a future API adds is refused
// until it is applied here.
package securitycontext
