package cri

import (
	"slices"

	v1 "k8s.io/api/core/v1"
)

// The restart decisions of the ContainerRestartRules feature (Beta and on
// by default since Kubernetes 1.35), as the kubelet takes them
// (pkg/api/v1/pod's ContainerShouldRestart and IsContainerRestartable): a
// container's own restartPolicy overrides the pod's, and its
// restartPolicyRules, tried in order, override both for the exit codes they
// match. Every cri package that decides on restarts or judges a pod's phase
// asks these, so that the syncer and the status agree.

// ContainerShouldRestart reports whether container c of the pod spec, which
// exited with exitCode, is to run again: the first of its
// restartPolicyRules that matches the exit code decides (action Restart),
// else its own restartPolicy, else the pod's. Rules count only beside a
// container restartPolicy, as the API requires. A RestartAllContainers rule
// is not honoured here (admission refuses such pods); like the kubelet with
// that feature off, it falls through to the container's policy.
func ContainerShouldRestart(spec *v1.PodSpec, c *v1.Container, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if rule, ok := MatchingRestartRule(c, exitCode); ok && rule.Action == v1.ContainerRestartRuleActionRestart {
			return true
		}
		switch *c.RestartPolicy {
		case v1.ContainerRestartPolicyAlways:
			return true
		case v1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case v1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch spec.RestartPolicy {
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	case v1.RestartPolicyNever:
		return false
	}
	return true // Always, the API's default
}

// MatchingRestartRule is the first of c's restartPolicyRules whose exit
// codes match exitCode (operator In: listed; NotIn: not listed).
func MatchingRestartRule(c *v1.Container, exitCode int32) (v1.ContainerRestartRule, bool) {
	for _, rule := range c.RestartPolicyRules {
		if rule.ExitCodes == nil {
			continue
		}
		listed := slices.Contains(rule.ExitCodes.Values, exitCode)
		switch rule.ExitCodes.Operator {
		case v1.ContainerRestartRuleOnExitCodesOpIn:
			if listed {
				return rule, true
			}
		case v1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !listed {
				return rule, true
			}
		}
	}
	return v1.ContainerRestartRule{}, false
}

// ContainerRestartable reports whether container c can run again after an
// exit, for some exit code: a rule with action Restart, else its own
// restartPolicy other than Never, else a pod restartPolicy other than
// Never (the kubelet's IsContainerRestartable).
func ContainerRestartable(spec *v1.PodSpec, c *v1.Container) bool {
	if c.RestartPolicy != nil {
		for _, rule := range c.RestartPolicyRules {
			if rule.Action == v1.ContainerRestartRuleActionRestart {
				return true
			}
		}
		return *c.RestartPolicy != v1.ContainerRestartPolicyNever
	}
	return spec.RestartPolicy != v1.RestartPolicyNever
}

// RestartsAfterKill reports whether container c, killed while it ran (a
// failed liveness or startup probe, a failed postStart hook), is started
// again: its own restartPolicy decides, else the pod's; the rules are not
// asked, since no exit code of its own ended it (the kubelet's
// computePodActions).
func RestartsAfterKill(spec *v1.PodSpec, c *v1.Container) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy != v1.ContainerRestartPolicyNever
	}
	return spec.RestartPolicy != v1.RestartPolicyNever
}
