package agent

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/worker"
)

// resyncChanged sends a sync to every admitted pod whose sandboxes or
// containers changed state since the previous poll, as the kubelet's pod
// lifecycle event generator does: a container that exits is noticed at the
// next poll, not at the next periodic resync.
func (a *Agent) resyncChanged() {
	a.mu.Lock()
	defer a.mu.Unlock()
	seen := make(map[types.UID]string, len(a.pods))
	for uid, e := range a.pods {
		if e.rejection != nil {
			continue
		}
		st, err := a.cache.Get(uid)
		if err != nil {
			continue
		}
		fp := fingerprint(st)
		seen[uid] = fp
		if old, ok := a.fingerprints[uid]; !ok || old != fp {
			a.updatePod(worker.SyncPodSync, e.pod)
		}
	}
	a.fingerprints = seen
}

// fingerprint is the pod's sandboxes and containers with their states.
func fingerprint(st *worker.PodStatus) string {
	var b strings.Builder
	for _, sb := range st.SandboxStatuses {
		b.WriteString(sb.GetId())
		b.WriteString(sb.GetState().String())
	}
	for _, c := range st.ContainerStatuses {
		b.WriteString(c.GetId())
		b.WriteString(c.GetState().String())
	}
	return b.String()
}
