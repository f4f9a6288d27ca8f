package admission

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestDeclaredFeatures(t *testing.T) {
	restartAll := []v1.ContainerRestartRule{{
		Action:    v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
	}}
	restart := []v1.ContainerRestartRule{{
		Action:    v1.ContainerRestartRuleActionRestart,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
	}}
	never := v1.ContainerRestartPolicyNever
	for _, tc := range []struct {
		name     string
		declared []string
		edit     func(*v1.PodSpec)
		admit    bool
		message  string
	}{
		{name: "a plain pod", edit: func(*v1.PodSpec) {}, admit: true},
		{name: "a Restart rule needs no declared feature", admit: true, edit: func(s *v1.PodSpec) {
			s.Containers[0].RestartPolicy, s.Containers[0].RestartPolicyRules = &never, restart
		}},
		{name: "RestartAllContainers on a container", edit: func(s *v1.PodSpec) {
			s.Containers[0].RestartPolicy, s.Containers[0].RestartPolicyRules = &never, restartAll
		}, message: "Pod requires node features that are not available: RestartAllContainersOnContainerExits"},
		{name: "RestartAllContainers on an init container", edit: func(s *v1.PodSpec) {
			s.InitContainers = []v1.Container{{Name: "init", Image: "img", RestartPolicy: &never, RestartPolicyRules: restartAll}}
		}, message: "Pod requires node features that are not available: RestartAllContainersOnContainerExits"},
		{name: "RestartAllContainers where the node declares it", declared: []string{"RestartAllContainersOnContainerExits"}, admit: true, edit: func(s *v1.PodSpec) {
			s.Containers[0].RestartPolicy, s.Containers[0].RestartPolicyRules = &never, restartAll
		}},
		{name: "user namespaces with hostNetwork", edit: func(s *v1.PodSpec) {
			s.HostNetwork, s.HostUsers = true, new(false)
		}, message: "Pod requires node features that are not available: UserNamespacesHostNetworkSupport"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := NewDeclaredFeatures(tc.declared, "v1.37.2-podlife")
			if err != nil {
				t.Fatal(err)
			}
			pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "img"}}}}
			tc.edit(&pod.Spec)
			r := h.Admit(pod, nil)
			if r.Admit != tc.admit {
				t.Fatalf("admit %v (%s: %s), want %v", r.Admit, r.Reason, r.Message, tc.admit)
			}
			if !tc.admit && (r.Reason != ReasonPodFeatureUnsupported || r.Message != tc.message) {
				t.Errorf("rejected with %q %q, want %q %q", r.Reason, r.Message, ReasonPodFeatureUnsupported, tc.message)
			}
		})
	}
	if _, err := NewDeclaredFeatures([]string{"NoSuchFeature"}, "v1.37.2"); err == nil {
		t.Error("an unknown declared feature was accepted")
	}
	if _, err := NewDeclaredFeatures(nil, "podlife"); err == nil {
		t.Error("a version that is none was accepted")
	}
}
