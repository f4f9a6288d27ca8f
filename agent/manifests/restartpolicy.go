package manifests

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The API server's rules for a container's restartPolicy and
// restartPolicyRules (pkg/apis/core/validation's
// validateContainerRestartPolicy and validateInitContainerRestartPolicy,
// with ContainerRestartRules and RestartAllContainersOnContainerExits on, as
// in Kubernetes 1.37), applied to static pods, which no API server
// validates.

var (
	containerRestartPolicies = []v1.ContainerRestartPolicy{
		v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyOnFailure,
	}
	restartRuleActions = []v1.ContainerRestartRuleAction{
		v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers,
	}
	restartRuleOperators = []v1.ContainerRestartRuleOnExitCodesOperator{
		v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleOnExitCodesOpNotIn,
	}
)

// Limits of the API server.
const (
	maxRestartRules         = 20
	maxRestartRuleExitCodes = 255
)

// validateRestartPolicy checks container c's restartPolicy and
// restartPolicyRules at path at: rules need a policy; the policy is
// Always, OnFailure or Never (an init container's Always makes it a
// sidecar); each rule has a known action, exit codes with a known
// operator, and the API's counts.
func validateRestartPolicy(c *v1.Container, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.RestartPolicy == nil {
		if len(c.RestartPolicyRules) > 0 {
			errs = append(errs, field.Required(at.Child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
		}
		return errs
	}
	if !contains(containerRestartPolicies, *c.RestartPolicy) {
		errs = append(errs, field.NotSupported(at.Child("restartPolicy"), *c.RestartPolicy, containerRestartPolicies))
	}
	rules := at.Child("restartPolicyRules")
	if len(c.RestartPolicyRules) > maxRestartRules {
		errs = append(errs, field.TooMany(rules, len(c.RestartPolicyRules), maxRestartRules))
	}
	for i, rule := range c.RestartPolicyRules {
		ruleAt := rules.Index(i)
		if !contains(restartRuleActions, rule.Action) {
			errs = append(errs, field.NotSupported(ruleAt.Child("action"), rule.Action, restartRuleActions))
		}
		if rule.ExitCodes == nil {
			errs = append(errs, field.Required(ruleAt.Child("exitCodes"), "must be specified"))
			continue
		}
		if !contains(restartRuleOperators, rule.ExitCodes.Operator) {
			errs = append(errs, field.NotSupported(ruleAt.Child("exitCodes", "operator"), rule.ExitCodes.Operator, restartRuleOperators))
		}
		if n := len(rule.ExitCodes.Values); n > maxRestartRuleExitCodes {
			errs = append(errs, field.TooMany(ruleAt.Child("exitCodes", "values"), n, maxRestartRuleExitCodes))
		}
	}
	return errs
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
