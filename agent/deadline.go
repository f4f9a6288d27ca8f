package agent

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/worker"
)

// The kubelet's reason and message for a pod past its active deadline
// (pkg/kubelet/active_deadline.go).
const (
	deadlineReason  = "DeadlineExceeded"
	deadlineMessage = "Pod was active on the node longer than the specified deadline"
)

// pastActiveDeadline reports whether pod, which started at start, has
// been active on the node for its spec.activeDeadlineSeconds or longer at
// now, as the kubelet's activeDeadlineHandler decides it; never without a
// deadline or a start time.
func pastActiveDeadline(pod *v1.Pod, start time.Time, now time.Time) bool {
	d := pod.Spec.ActiveDeadlineSeconds
	if d == nil || start.IsZero() {
		return false
	}
	return now.Sub(start) >= time.Duration(*d)*time.Second
}

// deadlineStatus is the final status of a pod stopped for its deadline:
// Failed with the kubelet's reason, whatever its containers did.
func deadlineStatus(s *v1.PodStatus) {
	s.Phase, s.Reason, s.Message = v1.PodFailed, deadlineReason, deadlineMessage
}

// killPastDeadlineLocked stops each admitted pod that is past its active
// deadline, counted from its status's start time, as the kubelet's
// activeDeadlineHandler has it stopped: an event, then phase Failed with
// reason DeadlineExceeded. The deadline is read from the pod's latest
// spec, so an update that sets or shortens it takes effect here (it is
// mutable in the API). Housekeeping calls it, so a deadline is kept to
// within a housekeeping interval. The caller holds a.mu.
func (a *Agent) killPastDeadlineLocked() {
	now := a.clock.Now()
	for uid, e := range a.pods {
		if e.rejection != nil || e.deadlineKilled || e.pod.Spec.ActiveDeadlineSeconds == nil || a.workers.IsPodTerminationRequested(uid) {
			continue
		}
		st, ok := a.statuses.Get(uid)
		if !ok || st.StartTime == nil || st.Phase == v1.PodSucceeded || st.Phase == v1.PodFailed {
			continue
		}
		if !pastActiveDeadline(e.pod, st.StartTime.Time, now) {
			continue
		}
		e.deadlineKilled = true
		a.events.Eventf(e.pod, v1.EventTypeNormal, deadlineReason, "%s", deadlineMessage)
		err := a.workers.UpdatePod(worker.UpdatePodOptions{
			UpdateType: worker.SyncPodKill, StartTime: now, Pod: e.pod,
			KillPodOptions: &worker.KillPodOptions{PodStatusFunc: deadlineStatus},
		})
		if err != nil {
			a.log.Error("engine refused a deadline kill", "pod", e.pod.Namespace+"/"+e.pod.Name, "err", err)
		}
	}
}
