package cri

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestContainerShouldRestart(t *testing.T) {
	always, onFailure, never := v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever
	cAlways, cOnFailure, cNever := v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever
	in42 := rule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 42)
	notIn01 := rule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpNotIn, 0, 1)
	all42 := rule(v1.ContainerRestartRuleActionRestartAllContainers, v1.ContainerRestartRuleOnExitCodesOpIn, 42)
	for _, tc := range []struct {
		pod     v1.RestartPolicy
		own     v1.ContainerRestartPolicy // "": none
		rules   []v1.ContainerRestartRule
		exit    int32
		restart bool
	}{
		// The pod's policy alone.
		{pod: always, exit: 0, restart: true},
		{pod: always, exit: 1, restart: true},
		{pod: "", exit: 0, restart: true},
		{pod: onFailure, exit: 0, restart: false},
		{pod: onFailure, exit: 1, restart: true},
		{pod: never, exit: 0, restart: false},
		{pod: never, exit: 1, restart: false},
		// The container's own policy overrides it.
		{pod: always, own: cNever, exit: 1, restart: false},
		{pod: always, own: cNever, exit: 0, restart: false},
		{pod: always, own: cOnFailure, exit: 0, restart: false},
		{pod: always, own: cOnFailure, exit: 137, restart: true},
		{pod: never, own: cAlways, exit: 0, restart: true},
		{pod: never, own: cOnFailure, exit: 1, restart: true},
		{pod: onFailure, own: cNever, exit: 1, restart: false},
		// Rules override both for the codes they match.
		{pod: never, own: cNever, rules: in42, exit: 42, restart: true},
		{pod: never, own: cNever, rules: in42, exit: 1, restart: false},
		{pod: always, own: cNever, rules: in42, exit: 0, restart: false},
		{pod: never, own: cNever, rules: notIn01, exit: 2, restart: true},
		{pod: never, own: cNever, rules: notIn01, exit: 1, restart: false},
		{pod: never, own: cOnFailure, rules: notIn01, exit: 1, restart: true},
		{pod: never, own: cNever, rules: append(in42, notIn01...), exit: 42, restart: true},
		// Rules without a container policy do not count (the API refuses them).
		{pod: never, rules: in42, exit: 42, restart: false},
		// RestartAllContainers is not honoured: the container's policy decides.
		{pod: never, own: cNever, rules: all42, exit: 42, restart: false},
		{pod: never, own: cOnFailure, rules: all42, exit: 42, restart: true},
	} {
		name := fmt.Sprintf("pod %s, own %q, rules %v, exit %d", tc.pod, tc.own, describeRules(tc.rules), tc.exit)
		t.Run(name, func(t *testing.T) {
			spec := &v1.PodSpec{RestartPolicy: tc.pod}
			c := &v1.Container{Name: "c", RestartPolicyRules: tc.rules}
			if tc.own != "" {
				c.RestartPolicy = new(tc.own)
			}
			if got := ContainerShouldRestart(spec, c, tc.exit); got != tc.restart {
				t.Errorf("ContainerShouldRestart = %v, want %v", got, tc.restart)
			}
			if tc.restart && !ContainerRestartable(spec, c) {
				t.Errorf("restarts on exit %d, but ContainerRestartable says never", tc.exit)
			}
		})
	}
}

func TestContainerRestartableAndAfterKill(t *testing.T) {
	in42 := rule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 42)
	for _, tc := range []struct {
		pod                    v1.RestartPolicy
		own                    v1.ContainerRestartPolicy
		rules                  []v1.ContainerRestartRule
		restartable, afterKill bool
	}{
		{pod: v1.RestartPolicyAlways, restartable: true, afterKill: true},
		{pod: v1.RestartPolicyOnFailure, restartable: true, afterKill: true},
		{pod: v1.RestartPolicyNever},
		{pod: v1.RestartPolicyAlways, own: v1.ContainerRestartPolicyNever},
		{pod: v1.RestartPolicyNever, own: v1.ContainerRestartPolicyOnFailure, restartable: true, afterKill: true},
		// A Restart rule makes it restartable; a kill leaves no exit code
		// of its own, so the policy (Never) decides there.
		{pod: v1.RestartPolicyNever, own: v1.ContainerRestartPolicyNever, rules: in42, restartable: true},
	} {
		t.Run(fmt.Sprintf("pod %s own %q rules %s", tc.pod, tc.own, describeRules(tc.rules)), func(t *testing.T) {
			spec := &v1.PodSpec{RestartPolicy: tc.pod}
			c := &v1.Container{Name: "c", RestartPolicyRules: tc.rules}
			if tc.own != "" {
				c.RestartPolicy = new(tc.own)
			}
			if got := ContainerRestartable(spec, c); got != tc.restartable {
				t.Errorf("ContainerRestartable = %v, want %v", got, tc.restartable)
			}
			if got := RestartsAfterKill(spec, c); got != tc.afterKill {
				t.Errorf("RestartsAfterKill = %v, want %v", got, tc.afterKill)
			}
		})
	}
}

func rule(action v1.ContainerRestartRuleAction, op v1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) []v1.ContainerRestartRule {
	return []v1.ContainerRestartRule{{Action: action, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}}
}

func describeRules(rules []v1.ContainerRestartRule) string {
	out := "["
	for _, r := range rules {
		out += fmt.Sprintf(" %s %s%v", r.Action, r.ExitCodes.Operator, r.ExitCodes.Values)
	}
	return out + " ]"
}
