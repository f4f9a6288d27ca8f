package agent

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/worker"
)

// housekeeping reconciles the engine with the manifests and the runtime,
// as the kubelet's HandlePodCleanups does: it refreshes the runtime cache,
// lets the engine drop finished records (SyncKnownPods), restarts desired
// pods the engine no longer knows (a UID reused after it finished), and
// kills runtime pods nobody knows: at startup, the orphans of a previous
// run. Restarts come before orphan kills, so a restarting UID is never
// mistaken for an orphan.
func (a *Agent) housekeeping(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.HousekeepingInterval.Duration)
	defer cancel()
	if err := a.cache.Refresh(ctx); err != nil {
		a.log.Warn("housekeeping: runtime cache refresh failed; using the previous snapshot", "err", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	desired := a.desiredLocked()
	working := a.workers.SyncKnownPods(desired)
	for _, pod := range desired {
		if _, ok := working[pod.UID]; !ok {
			a.log.Info("housekeeping: starting a desired pod the engine does not know", "pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID)
			a.updatePod(worker.SyncPodCreate, pod)
			working[pod.UID] = worker.PodWorkerSync{HasConfig: true, Static: worker.IsStatic(pod)}
		}
	}
	for _, rp := range a.cache.RunningPods() {
		if _, ok := working[rp.ID]; ok {
			continue
		}
		a.log.Info("housekeeping: killing a runtime pod nobody knows", "pod", rp.Namespace+"/"+rp.Name, "uid", rp.ID)
		err := a.workers.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodKill, StartTime: a.clock.Now(), RunningPod: rp})
		if err != nil {
			a.log.Error("engine refused a runtime-only kill", "uid", rp.ID, "err", err)
			continue
		}
		working[rp.ID] = worker.PodWorkerSync{State: worker.TerminatingPod, Orphan: true}
	}
	a.working = working
	a.gauges.set(desired, a.activePodsLocked())
	a.statuses.retain(func(uid types.UID) bool { return a.knownLocked(uid) })
	a.lastHousekeeping = a.clock.Now()
}

// runHousekeeping runs housekeeping every interval until ctx ends.
func (a *Agent) runHousekeeping(ctx context.Context) {
	t := a.clock.NewTicker(a.cfg.HousekeepingInterval.Duration)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			a.housekeeping(ctx)
		}
	}
}

// healthy reports whether housekeeping ran recently: a stuck agent (or a
// runtime that hangs every call) stops running it.
func (a *Agent) healthy() (bool, time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	age := a.clock.Since(a.lastHousekeeping)
	return age <= 3*a.cfg.HousekeepingInterval.Duration+time.Second, age
}
