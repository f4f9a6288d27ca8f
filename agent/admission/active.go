package admission

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ActivePods are the desired pods that still hold node resources, in their
// order (semantics invariant 48): desired pods, minus those the engine knows are
// terminated, minus those in a terminal phase whose termination was never
// requested.
//
// A terminal pod whose termination was requested is still counted while
// its containers may run: its phase may already say Succeeded or Failed
// while the engine is stopping them, and they still use the CPU and memory a
// new pod would be given. It stops counting as soon as isKnownTerminated
// says no container runs, without waiting for the cleanup that follows
// (kubelet issue #106884: pods rejected because of terminal pods that only
// had cleanup left). A terminal pod the engine was never asked to stop,
// such as one admission rejected or one found terminal after an agent
// restart, holds nothing (kubelet PR #104817, issue #105523).
//
// phase is the pod's latest known phase (the agent's status cache, which
// sees local changes before the pod object does); nil reads
// pod.Status.Phase.
func ActivePods(desired []*v1.Pod, isKnownTerminated, isTerminationRequested func(types.UID) bool, phase func(*v1.Pod) v1.PodPhase) []*v1.Pod {
	if phase == nil {
		phase = func(p *v1.Pod) v1.PodPhase { return p.Status.Phase }
	}
	active := make([]*v1.Pod, 0, len(desired))
	for _, p := range desired {
		if isKnownTerminated(p.UID) {
			continue
		}
		if ph := phase(p); (ph == v1.PodSucceeded || ph == v1.PodFailed) && !isTerminationRequested(p.UID) {
			continue
		}
		active = append(active, p)
	}
	return active
}
