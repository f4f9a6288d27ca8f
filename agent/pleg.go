package agent

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/worker"
)

// resyncChanged sends a sync to every admitted pod whose sandboxes or
// containers changed state since the previous poll, as the kubelet's pod
// lifecycle event generator does; the cache, which holds the polls, tells
// which (podcache.Cache.Changed).
func (a *Agent) resyncChanged() {
	a.mu.Lock()
	defer a.mu.Unlock()
	uids := make([]types.UID, 0, len(a.pods))
	for uid, e := range a.pods {
		if e.rejection == nil {
			uids = append(uids, uid)
		}
	}
	for _, uid := range a.cache.Changed(uids) {
		a.updatePod(worker.SyncPodSync, a.pods[uid].pod)
	}
}
