package agent

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri/kuberuntime"
	"github.com/podlife/podlife/worker"
)

// syncPastDeadlineLocked asks the engine for a sync of each running pod
// past its active deadline (spec.activeDeadlineSeconds, which an update
// of a running pod may set or shorten), in which SyncPod ends it, Failed
// with reason DeadlineExceeded: the kubelet's sync loop checks its
// activeDeadlineHandler's ShouldSync every second; housekeeping checks it
// at its interval, so a pod does not wait for its periodic resync. The
// start is the status's start time, the kubelet's too. The caller holds
// a.mu.
func (a *Agent) syncPastDeadlineLocked() {
	now := a.clock.Now()
	for uid, e := range a.pods {
		if e.rejection != nil || e.pod.Spec.ActiveDeadlineSeconds == nil {
			continue
		}
		if w, ok := a.working[uid]; ok && w.State != worker.SyncPod {
			continue // terminating already
		}
		st, ok := a.statuses.Get(uid)
		if !ok || st.StartTime == nil || st.Phase == v1.PodSucceeded || st.Phase == v1.PodFailed {
			continue
		}
		if kuberuntime.PastActiveDeadline(e.pod, st.StartTime.Time, now) {
			a.updatePod(worker.SyncPodSync, e.pod)
		}
	}
}
