package agent

import (
	"context"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/kubetypes"
	"github.com/podlife/podlife/worker"
)

// housekeeping reconciles the engine with the manifests and the runtime,
// as the kubelet's HandlePodCleanups does: it lets the engine drop finished
// records (SyncKnownPods), restarts desired pods the engine no longer knows
// (a UID reused after it finished), refreshes the runtime cache, and kills
// runtime pods nobody knows: at startup, the orphans of a previous run.
// Restarts come before orphan kills, so a restarting UID is never mistaken
// for an orphan. The refresh comes after SyncKnownPods, as in the kubelet:
// a snapshot taken before it could still show running a pod whose record
// SyncKnownPods then dropped because it had finished meanwhile, and that
// pod would be killed again as an orphan. For the same reason no orphan is
// killed when the refresh fails.
func (a *Agent) housekeeping(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.HousekeepingInterval.Duration)
	defer cancel()
	if !a.sourcesReady() {
		a.log.Info("housekeeping: waiting for the API server's first list of this node's pods; no pod is dropped or killed until then")
		return
	}
	a.mu.Lock()
	a.syncKnownLocked()
	a.killPastDeadlineLocked()
	a.mu.Unlock()
	// The runtime is read without the lock, so a slow runtime does not stall
	// manifest changes, /pods or /healthz.
	var running []*worker.RunningPod
	err := a.cache.Refresh(ctx)
	a.runtimeReads.observe(err, a.clock.Now())
	if err != nil {
		a.log.Warn("housekeeping: runtime cache refresh failed; no orphan is killed this time", "err", err)
	} else {
		running = a.cache.RunningPods()
	}
	onDisk, err := a.syncer.PodsOnDisk()
	if err != nil {
		a.log.Warn("housekeeping: reading the pod directories failed", "err", err)
	}
	a.mu.Lock()
	for _, rp := range running {
		if _, ok := a.working[rp.ID]; ok {
			continue
		}
		if e, ok := a.pods[rp.ID]; ok && e.rejection == nil {
			continue // admitted while the runtime was read
		}
		a.log.Info("housekeeping: killing a runtime pod nobody knows", "pod", rp.Namespace+"/"+rp.Name, "uid", rp.ID)
		err := a.workers.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodKill, StartTime: a.clock.Now(), RunningPod: rp})
		if err != nil {
			a.log.Error("engine refused a runtime-only kill", "uid", rp.ID, "err", err)
			continue
		}
		a.working[rp.ID] = worker.PodWorkerSync{State: worker.TerminatingPod, Orphan: true}
	}
	active := a.activePodsLocked()
	a.gauges.set(a.desiredLocked(), active)
	a.devices.Sweep(active)
	a.statuses.Retain(func(uid types.UID) bool { return a.knownLocked(uid) })
	if a.cluster != nil {
		a.cluster.tokens.Retain(func(uid types.UID) bool { return a.knownLocked(uid) })
	}
	// Pods gone that left only directories (their sandbox never came up)
	// are removed as the dead ones; running orphans are being killed.
	var dead []types.UID
	seen := map[types.UID]bool{}
	for _, rp := range running {
		seen[rp.ID] = true
	}
	for _, uid := range slices.Concat(a.cache.DeadPods(), onDisk) {
		if !seen[uid] && !a.knownLocked(uid) {
			dead = append(dead, uid)
		}
		seen[uid] = true
	}
	a.lastHousekeeping = a.clock.Now()
	a.mu.Unlock()
	// What the runtime holds of deleted pods (nobody knows them) in which
	// nothing runs is removed in the background, as the kubelet's garbage
	// collector does: their exited containers were kept until now as the
	// pods' exit codes. That includes those of a previous agent, and of
	// pods whose removal was cut short when an agent stopped.
	for _, uid := range dead {
		a.syncer.RemoveDeadPod(uid)
	}
	// The dead instances of the pods that remain beyond the policy go, as
	// the kubelet's container garbage collector removes them (it runs every
	// minute; one list call each housekeeping is cheap enough here).
	a.syncer.GarbageCollect(a.cfg.GCPolicy())
	if a.cluster != nil {
		a.gauges.mirror.Set(float64(a.syncMirrors(ctx)))
	}
}

// syncKnownLocked lets the engine drop finished records and starts the
// desired pods it no longer knows; a.working becomes what the engine holds.
func (a *Agent) syncKnownLocked() {
	desired := a.desiredLocked()
	working := a.workers.SyncKnownPods(desired)
	for _, pod := range desired {
		if _, ok := working[pod.UID]; !ok {
			a.log.Info("housekeeping: starting a desired pod the engine does not know", "pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID)
			a.updatePod(worker.SyncPodCreate, pod)
			working[pod.UID] = worker.PodWorkerSync{HasConfig: true, Static: kubetypes.IsStatic(pod)}
		}
	}
	a.working = working
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
