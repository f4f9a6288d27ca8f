package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/apistatus"
	"github.com/podlife/podlife/cri/events"
	"github.com/podlife/podlife/cri/securitycontext"
)

// A pod's security contexts are applied as the kubelet applies them (see
// cri/securitycontext): the sandbox's context and sysctls in
// sandboxConfig, each container's in containerSecurity, runAsNonRoot
// checked against the image's user before the container is created. What
// podlife cannot apply on this node is refused, never run with less
// isolation than the spec asks for: the pod's own fields stop every
// container before a sandbox is made; a container's stop that container,
// as the kubelet's CreateContainerConfigError does. Checks the kubelet
// makes at admission (sysctls, AppArmor, supplementalGroupsPolicy Strict)
// are the agent's admission's (agent/admission).

// RuntimeClassGetter resolves a RuntimeClass to its runtime handler.
type RuntimeClassGetter interface {
	// RuntimeHandler is the handler of RuntimeClass name; a class that
	// does not exist is an error the API's NotFound is.
	RuntimeHandler(ctx context.Context, name string) (string, error)
}

// podRefusal is why the pod's own spec cannot be run here, nil when it
// can: security-context fields podlife does not apply, a runtime class
// with no API server to look it up, a user namespace or a
// supplementalGroupsPolicy the runtime does not support.
func (s *Syncer) podRefusal(pod *v1.Pod) error {
	var reasons []string
	if fields := securitycontext.Unapplied("spec.securityContext", pod.Spec.SecurityContext); fields != nil {
		reasons = append(reasons, isolationError(fields).Error())
	}
	if name := pod.Spec.RuntimeClassName; name != nil && *name != "" && s.opts.RuntimeClasses == nil {
		reasons = append(reasons, fmt.Sprintf("spec.runtimeClassName: RuntimeClass %q cannot be looked up: the agent runs without an API server (standalone)", *name))
	}
	if err := securitycontext.UserNamespaceRefusal(pod, s.opts.RuntimeFeatures); err != nil {
		reasons = append(reasons, err.Error())
	}
	if securitycontext.StrictGroupsRefused(pod, s.opts.RuntimeFeatures) {
		reasons = append(reasons, securitycontext.ErrStrictGroupsNotSupported.Error())
	}
	if reasons == nil {
		return nil
	}
	return errors.New(strings.Join(reasons, "; "))
}

// isolationError is the refusal of fields, in the status and the event.
func isolationError(fields []string) error {
	return fmt.Errorf("%s: podlife does not apply these fields, and will not run a container with less isolation than its spec asks for",
		strings.Join(fields, ", "))
}

// runtimeHandler is the runtime handler of the pod's RuntimeClass, ""
// for none (the runtime's default).
func (s *Syncer) runtimeHandler(ctx context.Context, pod *v1.Pod) (string, error) {
	name := pod.Spec.RuntimeClassName
	if name == nil || *name == "" {
		return "", nil
	}
	if s.opts.RuntimeClasses == nil {
		return "", fmt.Errorf("RuntimeClass %q cannot be looked up without an API server", *name)
	}
	return s.opts.RuntimeClasses.RuntimeHandler(ctx, *name)
}

// supportsRRO reports whether the runtime handler of pod supports
// recursive read-only mounts (the kubelet's
// runtimeClassSupportsRecursiveReadOnlyMounts); a handler that cannot be
// resolved does not.
func (s *Syncer) supportsRRO(ctx context.Context, pod *v1.Pod) bool {
	handler, err := s.runtimeHandler(ctx, pod)
	return err == nil && s.opts.RuntimeFeatures.RecursiveReadOnly[handler]
}

// containerSecurity sets cfg's Linux security context for container c:
// the image's user is read (as the kubelet's getImageUser does),
// runAsNonRoot is verified against it, and the context is built. An
// error is a CreateContainerConfigError.
func (s *Syncer) containerSecurity(ctx context.Context, pod *v1.Pod, c *v1.Container, cfg *runtimeapi.ContainerConfig) error {
	if fields := securitycontext.Unapplied(containerPath(pod, c)+".securityContext", c.SecurityContext); fields != nil {
		return fmt.Errorf("container %q of pod %s/%s: %w", c.Name, pod.Namespace, pod.Name, isolationError(fields))
	}
	resp, err := s.images.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: c.Image, UserSpecifiedImage: c.Image}, false)
	if err != nil {
		return fmt.Errorf("image status of %s: %w", c.Image, err)
	}
	img := securitycontext.ImageUserOf(resp.GetImage())
	if err := securitycontext.VerifyRunAsNonRoot(pod, c, img); err != nil {
		return err
	}
	cfg.Linux.SecurityContext, err = securitycontext.Container(pod, c, img, s.opts.Security)
	return err
}

// containerPath is c's path in pod: spec.containers[i],
// spec.initContainers[i] or spec.ephemeralContainers[i].
func containerPath(pod *v1.Pod, c *v1.Container) string {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == c.Name {
			return fmt.Sprintf("spec.initContainers[%d]", i)
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == c.Name {
			return fmt.Sprintf("spec.containers[%d]", i)
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == c.Name {
			return fmt.Sprintf("spec.ephemeralContainers[%d]", i)
		}
	}
	return fmt.Sprintf("container %q", c.Name)
}

// refusePod reports a pod refused for its own spec: every container
// waits in CreateContainerConfigError, with a Failed event, and nothing of
// the pod is created. The sync fails, and its retries find the pod
// refused again: the API does not let these fields change.
func (s *Syncer) refusePod(pod *v1.Pod, p *cri.PodRuntime, sbID string, reason error) error {
	err := fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, reason)
	var waits []apistatus.Waiting
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			waits = append(waits, apistatus.Waiting{Container: cs[i].Name, Reason: "CreateContainerConfigError", Message: err.Error()})
		}
	}
	s.opts.Events.Eventf(pod, v1.EventTypeWarning, events.FailedToCreateContainer, "%s", events.ContainerError(err))
	s.setStatus(pod, p, sbID, false, waits)
	return err
}
