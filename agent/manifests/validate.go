package manifests

import (
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// checkNodeName rejects a node name that would make every pod name invalid,
// so the fault is not blamed on each manifest in turn.
func checkNodeName(nodeName string) error {
	if nodeName == "" {
		return errors.New("node name is empty")
	}
	if errs := validation.IsDNS1123Subdomain(strings.ToLower(nodeName)); len(errs) > 0 {
		return fmt.Errorf("node name %q: %s", nodeName, strings.Join(errs, ", "))
	}
	return nil
}

// validate returns every problem of a pod as written (before defaulting),
// so one edit can fix them all. It checks what the agent relies on, not all
// of the apiserver's validation: names usable by the runtime, containers
// that can be started, and the fields the pod workers read.
func validate(pod *v1.Pod, nodeName string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	switch {
	case pod.Name == "":
		add("metadata.name is required")
	default:
		if errs := validation.IsDNS1123Subdomain(podName(pod.Name, nodeName)); len(errs) > 0 {
			add("metadata.name %q (%q with the node name appended): %s", pod.Name, podName(pod.Name, nodeName), strings.Join(errs, ", "))
		}
	}
	if ns := pod.Namespace; ns != "" {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			add("metadata.namespace %q: %s", ns, strings.Join(errs, ", "))
		}
	}
	// The pod workers would take such a pod as being deleted already.
	if pod.DeletionTimestamp != nil || pod.DeletionGracePeriodSeconds != nil {
		add("metadata.deletionTimestamp and metadata.deletionGracePeriodSeconds must not be set")
	}

	s := &pod.Spec
	if len(s.Containers) == 0 {
		add("spec.containers: at least one container is required")
	}
	names := map[string]string{} // container name → field that first used it
	checkContainers := func(field string, cs []v1.Container) {
		for i := range cs {
			c := &cs[i]
			at := fmt.Sprintf("%s[%d]", field, i)
			switch {
			case c.Name == "":
				add("%s.name is required", at)
			case len(validation.IsDNS1123Label(c.Name)) > 0:
				add("%s.name %q: %s", at, c.Name, strings.Join(validation.IsDNS1123Label(c.Name), ", "))
			case names[c.Name] != "":
				add("%s.name %q is a duplicate of %s", at, c.Name, names[c.Name])
			default:
				names[c.Name] = at
			}
			switch {
			case c.Image == "":
				add("%s.image is required", at)
			case strings.TrimSpace(c.Image) != c.Image:
				add("%s.image %q has leading or trailing whitespace", at, c.Image)
			}
			switch c.ImagePullPolicy {
			case "", v1.PullAlways, v1.PullIfNotPresent, v1.PullNever:
			default:
				add("%s.imagePullPolicy %q is not one of Always, IfNotPresent, Never", at, c.ImagePullPolicy)
			}
		}
	}
	checkContainers("spec.initContainers", s.InitContainers)
	checkContainers("spec.containers", s.Containers)
	// An init container with restartPolicy Always is a sidecar; no other
	// policy is valid there.
	for i := range s.InitContainers {
		if p := s.InitContainers[i].RestartPolicy; p != nil && *p != v1.ContainerRestartPolicyAlways {
			add("spec.initContainers[%d].restartPolicy %q is not Always, the only policy an init container may have (a sidecar)", i, *p)
		}
	}

	if g := s.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		add("spec.terminationGracePeriodSeconds %d is negative", *g)
	}
	switch s.RestartPolicy {
	case "", v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever:
	default:
		add("spec.restartPolicy %q is not one of Always, OnFailure, Never", s.RestartPolicy)
	}
	return problems
}
