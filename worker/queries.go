package worker

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
)

// The query methods (semantics 2.1). Before the first SyncKnownPods an
// unknown UID reads as "could be running, nothing to tear down"; after it,
// as "not running, tear everything down".

func (c *Core) record(uid types.UID) (fsm.Record, bool) { return c.machine.Get(uid) }

// IsPodKnownTerminated: the UID has a record and no container of it runs.
func (c *Core) IsPodKnownTerminated(uid types.UID) bool {
	r, ok := c.record(uid)
	return ok && r.State.IsTerminated()
}

// CouldHaveRunningContainers: a known UID is not terminated; an unknown one
// could run only before the first SyncKnownPods.
func (c *Core) CouldHaveRunningContainers(uid types.UID) bool {
	if r, ok := c.record(uid); ok {
		return !r.State.IsTerminated()
	}
	return !c.machine.Synced()
}

// ShouldPodBeFinished: the worker is done with the UID.
func (c *Core) ShouldPodBeFinished(uid types.UID) bool {
	if r, ok := c.record(uid); ok {
		return r.State.IsFinished()
	}
	return c.machine.Synced()
}

// IsPodTerminationRequested: termination was requested (the pod may still
// be starting); false for an unknown UID.
func (c *Core) IsPodTerminationRequested(uid types.UID) bool {
	r, ok := c.record(uid)
	return ok && r.State.TerminationRequested()
}

// ShouldPodContainersBeTerminating: no new container may start.
func (c *Core) ShouldPodContainersBeTerminating(uid types.UID) bool {
	if r, ok := c.record(uid); ok {
		return r.State.TerminationStarted()
	}
	return c.machine.Synced()
}

// ShouldPodRuntimeBeRemoved: runtime resources (volumes, ...) may go.
func (c *Core) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	if r, ok := c.record(uid); ok {
		return r.State.IsTerminated()
	}
	return c.machine.Synced()
}

// ShouldPodContentBeRemoved: on-disk content may go: the pod was evicted, or
// deleted and terminated.
func (c *Core) ShouldPodContentBeRemoved(uid types.UID) bool {
	if r, ok := c.record(uid); ok {
		return r.Vars.Evicted || (r.Vars.Deleted && r.State.IsTerminated())
	}
	return c.machine.Synced()
}

// IsPodForMirrorPodTerminatingByFullName: the static pod holding the full
// name is terminating but not yet terminated, so its mirror pod stays.
func (c *Core) IsPodForMirrorPodTerminatingByFullName(fullName string) bool {
	uid, ok := c.machine.SlotHolder(fullName)
	if !ok {
		return false
	}
	r, _ := c.record(uid)
	return r.State.TerminationRequested() && !r.State.IsTerminated()
}

// WaitingFor: the static pod waits to start because another UID holds its
// full name (still running or stopping); that UID.
func (c *Core) WaitingFor(uid types.UID) (types.UID, bool) {
	r, ok := c.record(uid)
	if !ok || r.State != fsm.Waiting || r.FullName == "" {
		return "", false
	}
	holder, held := c.machine.SlotHolder(r.FullName)
	if !held || holder == uid {
		return "", false
	}
	return holder, true
}

// State is the pod's lifecycle state in the table (Absent when unknown).
func (c *Core) State(uid types.UID) (fsm.State, bool) {
	r, ok := c.record(uid)
	return r.State, ok
}

func (w *PodWorkers) locked(f func(*Core) bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return f(w.core)
}

// IsPodKnownTerminated reports whether the pod is known and terminated.
func (w *PodWorkers) IsPodKnownTerminated(uid types.UID) bool {
	return w.locked(func(c *Core) bool { return c.IsPodKnownTerminated(uid) })
}

// CouldHaveRunningContainers reports whether containers of the pod may run.
func (w *PodWorkers) CouldHaveRunningContainers(uid types.UID) bool {
	return w.locked(func(c *Core) bool { return c.CouldHaveRunningContainers(uid) })
}

// ShouldPodBeFinished reports whether the worker is done with the pod.
func (w *PodWorkers) ShouldPodBeFinished(uid types.UID) bool {
	return w.locked(func(c *Core) bool { return c.ShouldPodBeFinished(uid) })
}

// IsPodTerminationRequested reports whether the pod's termination was requested.
func (w *PodWorkers) IsPodTerminationRequested(uid types.UID) bool {
	return w.locked(func(c *Core) bool { return c.IsPodTerminationRequested(uid) })
}

// ShouldPodContainersBeTerminating reports whether no new container may start.
func (w *PodWorkers) ShouldPodContainersBeTerminating(uid types.UID) bool {
	return w.locked(func(c *Core) bool { return c.ShouldPodContainersBeTerminating(uid) })
}

// ShouldPodRuntimeBeRemoved reports whether the pod's runtime resources may go.
func (w *PodWorkers) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	return w.locked(func(c *Core) bool { return c.ShouldPodRuntimeBeRemoved(uid) })
}

// ShouldPodContentBeRemoved reports whether the pod's on-disk content may go.
func (w *PodWorkers) ShouldPodContentBeRemoved(uid types.UID) bool {
	return w.locked(func(c *Core) bool { return c.ShouldPodContentBeRemoved(uid) })
}

// IsPodForMirrorPodTerminatingByFullName reports whether the static pod
// holding fullName is terminating.
func (w *PodWorkers) IsPodForMirrorPodTerminatingByFullName(fullName string) bool {
	return w.locked(func(c *Core) bool { return c.IsPodForMirrorPodTerminatingByFullName(fullName) })
}

// State returns the pod's lifecycle state in the table.
func (w *PodWorkers) State(uid types.UID) (fsm.State, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.core.State(uid)
}

// WaitingFor returns the UID holding the full name the static pod uid
// waits for, if it waits for one.
func (w *PodWorkers) WaitingFor(uid types.UID) (types.UID, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.core.WaitingFor(uid)
}
