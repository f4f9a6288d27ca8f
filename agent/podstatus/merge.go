package podstatus

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ownedConditions are the condition types the agent generates. Any other
// type in the API status (the eviction API's DisruptionTarget, a readiness
// gate's condition) belongs to another component and is kept as it is.
var ownedConditions = map[v1.PodConditionType]bool{
	v1.PodScheduled:              true,
	v1.PodInitialized:            true,
	v1.ContainersReady:           true,
	v1.PodReady:                  true,
	v1.PodReadyToStartContainers: true,
}

// mergeInput is what the status written to the API is computed from.
type mergeInput struct {
	api   v1.PodStatus // the API's current status
	local v1.PodStatus // the status the agent recorded
	// generation is the metadata.generation the local status is for; 0
	// leaves observedGeneration as the API has it.
	generation int64
	// containersStopped: no container of the pod can run any more (the
	// engine's !CouldHaveRunningContainers), so a terminal phase may be
	// written.
	containersStopped bool
	// readinessGates are the pod's spec.readinessGates: Ready waits for
	// their conditions in the API's status.
	readinessGates []v1.PodReadinessGate
	now            metav1.Time
}

// phaseOutcome says what became of the local phase.
type phaseOutcome int

const (
	phaseWritten      phaseOutcome = iota
	phaseHeldBack                  // terminal, but containers may still run: the API's phase stays
	phaseKeptTerminal              // the API's phase is terminal and stays
)

// mergeStatus is the status to write: the agent's fields from the local
// status, everything else as the API has it, with the kubelet's phase and
// condition rules applied, Ready held back by the readiness gates whose
// conditions the API's status does not have True. Times are at the API's
// second precision.
func mergeStatus(in mergeInput) (v1.PodStatus, phaseOutcome) {
	out := *in.api.DeepCopy()
	local := in.local.DeepCopy()

	outcome := phaseWritten
	switch {
	case isTerminal(in.api.Phase):
		// A terminal phase is final, whoever wrote it.
		if local.Phase != in.api.Phase {
			outcome = phaseKeptTerminal
		}
	case isTerminal(local.Phase) && !in.containersStopped:
		// Controllers reuse what a terminal pod held (its name, its
		// volumes): not while its containers may still run.
		outcome = phaseHeldBack
	default:
		out.Phase, out.Reason, out.Message = local.Phase, local.Reason, local.Message
	}
	becomesTerminal := !isTerminal(in.api.Phase) && isTerminal(out.Phase)

	out.InitContainerStatuses = local.InitContainerStatuses
	out.ContainerStatuses = local.ContainerStatuses
	out.EphemeralContainerStatuses = local.EphemeralContainerStatuses
	// Addresses the agent does not know (any more: a stopped pod's sandbox
	// is gone) stay as reported.
	if local.PodIP != "" || len(local.PodIPs) > 0 {
		out.PodIP, out.PodIPs = local.PodIP, local.PodIPs
	}
	if local.HostIP != "" || len(local.HostIPs) > 0 {
		out.HostIP, out.HostIPs = local.HostIP, local.HostIPs
	}
	// The start time is when the agent first acknowledged the pod: it
	// never moves.
	if out.StartTime == nil {
		out.StartTime = local.StartTime
	}
	if in.generation > 0 {
		out.ObservedGeneration = in.generation
	}
	if isTerminal(out.Phase) {
		notReadyWhenTerminal(local.Conditions, out.Phase, in.now)
	}
	gateReady(in.readinessGates, in.api.Conditions, local.Conditions, in.api.Conditions, in.now)
	out.Conditions = mergeConditions(in.api.Conditions, local.Conditions, becomesTerminal, in.generation)
	normalizeTimes(&out)
	return out, outcome
}

// mergeConditions keeps the API's order: an owned condition is replaced by
// the local one of its type (or dropped when the agent no longer reports
// it), another component's condition is kept. A local condition of a type
// the agent does not own (the DisruptionTarget of a node shutdown) is only
// written with the terminal phase it explains. Local conditions new to the
// API follow. A condition whose status did not change keeps the API's
// transition time.
func mergeConditions(api, local []v1.PodCondition, becomesTerminal bool, generation int64) []v1.PodCondition {
	writes := func(t v1.PodConditionType) bool { return ownedConditions[t] || becomesTerminal }
	fromLocal := func(c v1.PodCondition, old *v1.PodCondition) v1.PodCondition {
		if old != nil && old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		if generation > 0 {
			c.ObservedGeneration = generation
		}
		return c
	}
	var out []v1.PodCondition
	inAPI := map[v1.PodConditionType]bool{}
	for i := range api {
		c := &api[i]
		inAPI[c.Type] = true
		lc, reported := findCondition(local, c.Type)
		switch {
		case !writes(c.Type) || (!reported && !ownedConditions[c.Type]):
			out = append(out, *c)
		case reported:
			out = append(out, fromLocal(*lc, c))
		}
	}
	for _, c := range local {
		if !inAPI[c.Type] && writes(c.Type) {
			out = append(out, fromLocal(c, nil))
		}
	}
	return out
}

// notReadyWhenTerminal sets Ready and ContainersReady to False: a terminal
// pod serves nothing, whatever its last probe said (kubernetes issue
// 108594).
func notReadyWhenTerminal(conditions []v1.PodCondition, phase v1.PodPhase, now metav1.Time) {
	reason := "PodFailed"
	if phase == v1.PodSucceeded {
		reason = "PodCompleted"
	}
	for i := range conditions {
		c := &conditions[i]
		if (c.Type == v1.PodReady || c.Type == v1.ContainersReady) && c.Status == v1.ConditionTrue {
			c.Status, c.Reason, c.Message, c.LastTransitionTime = v1.ConditionFalse, reason, "", now
		}
	}
}

func findCondition(cs []v1.PodCondition, t v1.PodConditionType) (*v1.PodCondition, bool) {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i], true
		}
	}
	return nil, false
}

func isTerminal(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }
