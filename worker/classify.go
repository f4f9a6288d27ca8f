package worker

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/kubetypes"
)

// ErrInvalidUpdate is wrapped by every error UpdatePod returns for bad
// input. Nothing is changed by such a call (a completion channel it carries
// is closed, so no caller waits forever).
var ErrInvalidUpdate = errors.New("invalid UpdatePod")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidUpdate}, args...)...)
}

// validate checks an update and returns its UID. A runtime-only update of
// another type than kill is reported with errRuntimeNonKill: it is still
// fired (as RuntimeUpdate, which every state ignores) so traces show it.
func validate(o *UpdatePodOptions) (types.UID, error) {
	if o.UpdateType < SyncPodSync || o.UpdateType > SyncPodKill {
		return "", invalid("unknown update type %d", int(o.UpdateType))
	}
	if kpo := o.KillPodOptions; kpo != nil && kpo.PodTerminationGracePeriodSecondsOverride != nil && *kpo.PodTerminationGracePeriodSecondsOverride < 0 {
		return "", invalid("negative grace period override %d", *kpo.PodTerminationGracePeriodSecondsOverride)
	}
	switch {
	case o.Pod != nil:
		if o.Pod.UID == "" {
			return "", invalid("pod %s/%s has no UID", o.Pod.Namespace, o.Pod.Name)
		}
		if g := o.Pod.DeletionGracePeriodSeconds; g != nil && *g < 0 {
			return "", invalid("pod %s/%s has a negative deletion grace period %d", o.Pod.Namespace, o.Pod.Name, *g)
		}
		if g := o.Pod.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
			return "", invalid("pod %s/%s has a negative terminationGracePeriodSeconds %d", o.Pod.Namespace, o.Pod.Name, *g)
		}
		return o.Pod.UID, nil
	case o.RunningPod != nil:
		if o.RunningPod.ID == "" {
			return "", invalid("runtime pod %s/%s has no UID", o.RunningPod.Namespace, o.RunningPod.Name)
		}
		if o.UpdateType != SyncPodKill {
			return o.RunningPod.ID, errRuntimeNonKill
		}
		return o.RunningPod.ID, nil
	}
	return "", invalid("neither Pod nor RunningPod is set")
}

var errRuntimeNonKill = invalid("a runtime-only pod (RunningPod without Pod) can only be killed")

var updateEvents = [...]fsm.Event{SyncPodSync: fsm.Update, SyncPodUpdate: fsm.Update, SyncPodCreate: fsm.Create, SyncPodKill: fsm.Kill}

// graceFacts returns the grace override (the smaller of the pod's deletion
// grace period and the kill's override; NoGrace if neither) and the pod's
// spec value.
func graceFacts(pod *v1.Pod, kpo *KillPodOptions) (override, spec int64) {
	override = fsm.NoGrace
	take := func(g *int64) {
		if g != nil && (override == fsm.NoGrace || *g < override) {
			override = *g
		}
	}
	if pod != nil {
		take(pod.DeletionGracePeriodSeconds)
		if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
			spec = *g
		}
	}
	if kpo != nil {
		take(kpo.PodTerminationGracePeriodSecondsOverride)
	}
	return override, spec
}

// configParams are the table parameters of an update carrying a pod.
func configParams(o *UpdatePodOptions) fsm.Params {
	pod := o.Pod
	override, spec := graceFacts(pod, o.KillPodOptions)
	p := fsm.Params{
		Static:        kubetypes.IsStatic(pod),
		Deleting:      pod.DeletionTimestamp != nil,
		TerminalPhase: pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed,
		GraceOverride: override,
		SpecGrace:     spec,
	}
	if kpo := o.KillPodOptions; kpo != nil {
		p.Evict = kpo.Evict // Notify: the Core's, from its waiter
	}
	return p
}

// terminalPhase reports whether an update carries a pod in a terminal
// phase: only for such a pod does the Core read UpdateInput.RuntimeTerminal.
func terminalPhase(o *UpdatePodOptions) bool {
	return o.Pod != nil && (o.Pod.Status.Phase == v1.PodSucceeded || o.Pod.Status.Phase == v1.PodFailed)
}

// runtimeTerminal reports whether a cached runtime status shows nothing
// running: no running container and no ready sandbox.
func runtimeTerminal(s *PodStatus) bool {
	for _, c := range s.ContainerStatuses {
		if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return false
		}
	}
	for _, sb := range s.SandboxStatuses {
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			return false
		}
	}
	return true
}
