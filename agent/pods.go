package agent

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/admission"
	"github.com/podlife/podlife/kubetypes"
	"github.com/podlife/podlife/worker"
)

// podEntry is one pod from a manifest or from the API server.
type podEntry struct {
	pod *v1.Pod
	// path is the pod's manifest; "" for a pod from the API server.
	path string
	// rejection is why admission refused the pod; a rejected pod never
	// reaches the engine (semantics invariant 47).
	rejection *admission.Result
	// deadlineKilled: the pod was stopped for its active deadline.
	deadlineKilled bool
}

// handleChange applies one change of a pod source: a manifest, or an API
// pod (Path ""). The caller holds a.mu.
func (a *Agent) handleChange(ch kubetypes.Change) {
	switch ch.Op {
	case kubetypes.Add:
		a.admitLocked(ch.Pod, ch.Path)
	case kubetypes.Update:
		e, ok := a.pods[ch.Pod.UID]
		if ok && e.rejection != nil && ch.Path == "" {
			// A rejected API pod is Failed for good: the API server knows it
			// so, and an edit does not admit it again (a manifest's edit
			// does: the file is all there is of it).
			e.pod = ch.Pod
			return
		}
		if !ok || e.rejection != nil {
			a.admitLocked(ch.Pod, ch.Path)
			return
		}
		e.pod, e.path = ch.Pod, ch.Path
		a.updatePod(worker.SyncPodUpdate, ch.Pod)
	case kubetypes.Remove:
		e, ok := a.pods[ch.Pod.UID]
		if !ok {
			return
		}
		delete(a.pods, ch.Pod.UID)
		if e.rejection == nil {
			a.updatePod(worker.SyncPodKill, e.pod)
			// The engine holds the pod until it finished: Pods reports it as
			// an orphan from now on, not only once housekeeping has seen it.
			if _, ok := a.working[ch.Pod.UID]; !ok {
				a.working[ch.Pod.UID] = worker.PodWorkerSync{State: worker.TerminatingPod, HasConfig: true, Static: kubetypes.IsStatic(e.pod), Orphan: true}
			}
		}
	}
}

// admitLocked runs admission for a new pod and hands an admitted one to
// the engine; a rejected one gets a Failed status with the reason.
func (a *Agent) admitLocked(pod *v1.Pod, path string) {
	e := &podEntry{pod: pod, path: path}
	a.pods[pod.UID] = e
	if neverStarts(pod) {
		// Nothing of it will run: the engine only finishes it (an agent
		// restarted while the pod was being deleted).
		a.updatePod(worker.SyncPodCreate, pod)
		return
	}
	res := a.admission.Admit(pod, a.activePodsLocked())
	if !res.Admit {
		e.rejection = &res
		a.events.Eventf(pod, v1.EventTypeWarning, res.Reason, "%s", res.Message)
		a.statuses.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodFailed, Reason: res.Reason, Message: res.Message})
		return
	}
	a.updatePod(worker.SyncPodCreate, pod)
}

// updatePod hands an update to the engine; the engine rejects only
// malformed input, which a decoded manifest never is.
func (a *Agent) updatePod(t worker.UpdateType, pod *v1.Pod) {
	err := a.workers.UpdatePod(worker.UpdatePodOptions{UpdateType: t, StartTime: a.clock.Now(), Pod: pod})
	if err != nil {
		a.log.Error("engine refused an update", "type", t.String(), "pod", pod.Namespace+"/"+pod.Name, "err", err)
	}
}

// desiredLocked lists the admitted pods, ordered by UID.
func (a *Agent) desiredLocked() []*v1.Pod {
	out := make([]*v1.Pod, 0, len(a.pods))
	for _, e := range a.pods {
		if e.rejection == nil {
			out = append(out, e.pod)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out
}

// activePodsLocked are the pods admission counts against allocatable: a
// terminal pod keeps counting until the engine says its containers
// stopped.
func (a *Agent) activePodsLocked() []*v1.Pod {
	return admission.ActivePods(a.desiredLocked(), a.workers.IsPodKnownTerminated, a.workers.IsPodTerminationRequested, a.statuses.Phase)
}

// knownLocked reports whether uid is a pod of a manifest or an engine
// record as of the last housekeeping.
func (a *Agent) knownLocked(uid types.UID) bool {
	if _, ok := a.pods[uid]; ok {
		return true
	}
	_, ok := a.working[uid]
	return ok
}

// neverStarts reports whether the engine will start no container of pod:
// it is being deleted, or its API status is terminal. Such a pod takes no
// resources and needs no admission, and must not be rejected: its
// containers of an earlier agent would then be stopped as orphans, without
// the grace period of its deletion.
func neverStarts(pod *v1.Pod) bool {
	return pod.DeletionTimestamp != nil || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}
