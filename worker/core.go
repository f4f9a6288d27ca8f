package worker

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/kubetypes"
)

// Core is the engine's synchronous heart, in the manner of etcd's RawNode:
// the lifecycle records (an fsm.Machine) plus what the engine keeps for each
// record (the pending and last taken update, kill waiters, whether a sync
// context was handed out). It starts no goroutine, never blocks and calls
// nothing outside itself: what must happen beyond its own state (start a
// pod's loop, arm a timer, close a channel, cancel a sync) it records as
// Effects, which its shell collects with TakeEffects. Every change of a
// lifecycle state or record variable goes through fsm.Machine.Fire.
//
// A Core is a value, as raft's: its state and its effects hold no handle
// into the world (no channel, context, clock reading or status cache).
// Kill waiters are IDs the shell maps to channels (UpdateInput.Waiter), a
// cancellation names the pod (CancelSync), a timer is a delay, the runtime
// status a pod is created with is a fact the shell read (RuntimeTerminal),
// and the status handed to a sync call is fetched by the shell. So Clone
// is a structured copy of maps of values, and a model checker can branch
// on every input cheaply. (Metrics and the logger are observers: shared
// by clones, never read back.)
//
// A Core is not safe for concurrent use; PodWorkers serialises every call
// with its mutex.
type Core struct {
	machine *fsm.Machine
	// pods has an entry for every record that is neither Finished nor
	// Removed: a finished record needs nothing but its lifecycle state.
	pods map[types.UID]*podData
	// unendedLoops counts, per UID without an entry in pods, the worker
	// loops the Core asked for (a RunLoop effect) whose Next has not yet
	// returned false; a UID with an entry in pods keeps its count in
	// podData.loops (one lookup per input instead of two), and the count
	// moves between the two when the entry is made or dropped. The Core
	// asks for another loop only at 0. The count outlives a record, so a
	// loop of a removed incarnation is still counted. A shell that drops a
	// RunLoop (PodWorkers after Stop) leaves its count above 0 for good.
	unendedLoops map[types.UID]int
	// effects are the effects recorded and not yet taken (TakeEffects).
	effects []Effect
	// identityStatus: Work carries an identity status (the shell has no
	// StatusCache to fetch the runtime status from, or its syncer reads
	// the runtime itself).
	identityStatus bool
	jitter         func(time.Duration) time.Duration
	resync         time.Duration
	backoff        time.Duration
	// clock only times the latency metric.
	clock   clock.PassiveClock
	metrics *metrics
	log     *slog.Logger
}

// WaiterID names a kill completion channel the shell registered with an
// UpdatePod (UpdateInput.Waiter); a CloseChannel effect names it back. 0 is
// no waiter.
type WaiterID uint64

// UpdateInput is what the shell adds to an UpdatePod for the Core, in place
// of the handles the update carries.
type UpdateInput struct {
	// Waiter is the ID the shell registered the kill's completion channel
	// under (0: none). The Core never reads KillPodOptions.CompletedCh.
	Waiter WaiterID
	// RuntimeTerminal: the shell's status cache shows nothing running for
	// the pod. Read only for a pod with a terminal phase that has no record
	// (semantics T2); the shell reads it before the call, for a pod whose
	// phase is terminal.
	RuntimeTerminal bool
}

// podData is what the engine keeps for a live record besides its lifecycle.
type podData struct {
	// pending is the latest update not yet taken by the worker, when
	// hasPending. A record can be queued without one (after a phase change
	// or a timer); the worker then repeats the last taken update.
	pending    UpdatePodOptions
	hasPending bool
	// active is the merged view of the updates taken so far: the latest
	// pod, mirror pod and runtime pod.
	active UpdatePodOptions
	// waiters are the kill completion channels to close when the
	// terminating sync succeeds; statusFn is the latest status function.
	// Clone shares the array of waiters clipped, so that an append on
	// either side copies it.
	waiters  []WaiterID
	statusFn func(*v1.PodStatus)
	// syncing: a Work was handed out since the pod's sync context was last
	// cancelled, so the shell holds a context for the pod's sync calls; a
	// row's Cancel effect asks it to cancel that one (CancelSync) and the
	// next call gets a new one.
	syncing bool
	// identity is the status handed to syncers without a StatusCache.
	identity *PodStatus
	// panics counts the pod's consecutive sync calls that panicked; a call
	// that returns sets it back to 0. It lengthens the back-off (backOff).
	panics int
	// loops is the pod's count of unended loops (Core.unendedLoops); gone
	// is set once forget dropped the entry (the count went back to the
	// map).
	loops int
	gone  bool
}

// UpdatePod delivers an update (semantics 1.4), with what the shell adds
// to it (in). It returns an error only for invalid input, and then changes
// nothing.
func (c *Core) UpdatePod(o UpdatePodOptions, in UpdateInput) error {
	uid, err := validate(&o)
	if errors.Is(err, errRuntimeNonKill) {
		_, ferr := c.machine.Fire(uid, "", fsm.RuntimeUpdate, fsm.Params{GraceOverride: fsm.NoGrace})
		c.release(namedUID(&o), in.Waiter)
		return errors.Join(err, ferr)
	}
	if err != nil {
		c.release(namedUID(&o), in.Waiter)
		return err
	}
	pd := c.pods[uid]
	var ev fsm.Event
	var p fsm.Params
	var fullName string
	if o.Pod != nil {
		o.RunningPod = nil
		ev, p = updateEvents[o.UpdateType], configParams(&o)
		p.Notify = o.KillPodOptions != nil && in.Waiter != 0
		if p.Static {
			fullName = kubetypes.FullName(o.Pod.Name, o.Pod.Namespace)
		}
		if _, known := c.machine.Get(uid); !known && p.TerminalPhase {
			p.RuntimeTerminal = in.RuntimeTerminal
		}
	} else {
		ev = fsm.RuntimeKill // runtime-only pods are never static
		if known := pd.lastPod(); known != nil {
			// A kill of a runtime pod whose config is known kills that pod.
			o.Pod, o.RunningPod = known, nil
		}
		p.GraceOverride, p.SpecGrace = graceFacts(o.Pod, o.KillPodOptions)
		p.Notify = o.KillPodOptions != nil && in.Waiter != 0
	}
	t, err := c.machine.Fire(uid, fullName, ev, p)
	if err != nil {
		c.release(uid, in.Waiter)
		return err // external events always have a row: a bug in the table
	}
	if t.From == fsm.Absent && t.Event == fsm.RuntimeKill {
		c.metrics.orphanedRuntimePod()
	}
	c.apply(t, pd, &o, in.Waiter)
	return nil
}

// apply carries out the effects of a transition that fired for the pod.
// pd is the pod's entry in pods (nil: none), incoming the update that
// caused the transition, if any, and waiter its kill's.
func (c *Core) apply(t fsm.Transition, pd *podData, incoming *UpdatePodOptions, waiter WaiterID) {
	uid := t.Pod
	if pd == nil && incoming != nil && t.To.HasRecord() && !t.To.IsFinished() {
		pd = &podData{}
		if n, ok := c.unendedLoops[uid]; ok { // a loop of an earlier incarnation
			pd.loops = n
			delete(c.unendedLoops, uid)
		}
		c.pods[uid] = pd
	}
	if incoming != nil {
		c.takeIncoming(t, pd, incoming, waiter)
	}
	if pd == nil {
		return
	}
	e := t.Effects
	if e.Has(fsm.Cancel) && pd.syncing {
		c.emit(Effect{Kind: CancelSync, UID: uid})
		pd.syncing = false
	}
	if e.Has(fsm.CloseWaiters) {
		c.closeWaiters(uid, pd)
	}
	queued := t.Vars.Pending == fsm.PendingQueued
	switch {
	case e.Has(fsm.Exit) || t.To == fsm.Absent:
		c.forget(uid, pd)
		return
	case e.Has(fsm.Resync) && !queued:
		c.armTimer(uid, c.resync)
	case e.Has(fsm.Backoff) && !queued:
		c.armTimer(uid, c.backOff(pd))
	}
	if queued && t.Vars.InFlight == fsm.InFlightNone && pd.loops == 0 {
		pd.loops++
		c.emit(Effect{Kind: RunLoop, UID: uid})
	}
}

// maxPanicBackOff caps the back-off of a pod whose syncs keep panicking
// (unless BackOffPeriod is longer).
const maxPanicBackOff = 5 * time.Minute

// backOff is the delay before the pod is retried after a failed sync or a
// parking (jittered, as every delay): BackOffPeriod, doubled for each
// consecutive panic after the first, up to maxPanicBackOff, so that a
// syncer that panics every time is not called at the rate of an ordinary
// failure forever.
func (c *Core) backOff(pd *podData) time.Duration {
	d := c.backoff
	for n := 1; n < pd.panics && d < maxPanicBackOff; n++ {
		d *= 2
	}
	return max(c.backoff, min(d, maxPanicBackOff))
}

// armTimer asks for Timer(uid) after d, jittered.
func (c *Core) armTimer(uid types.UID, d time.Duration) {
	c.emit(Effect{Kind: ArmTimer, UID: uid, Delay: c.jitter(d)})
}

// closeWaiters releases the kill waiters of a pod that terminated.
func (c *Core) closeWaiters(uid types.UID, pd *podData) {
	for _, id := range pd.waiters {
		c.emit(Effect{Kind: CloseChannel, UID: uid, Waiter: id})
	}
	pd.waiters, pd.statusFn = nil, nil
}

// takeIncoming keeps or releases what an update carries: the update itself
// becomes the pending one (TakeUpdate), its kill options are kept until
// the pod terminated (KeepNotify) or its channel is closed at once.
func (c *Core) takeIncoming(t fsm.Transition, pd *podData, o *UpdatePodOptions, waiter WaiterID) {
	if pd == nil { // finished or no record: nothing can be kept
		c.release(t.Pod, waiter)
		return
	}
	if t.Effects.Has(fsm.TakeUpdate) {
		if pd.hasPending && !pd.pending.StartTime.IsZero() && (o.StartTime.IsZero() || pd.pending.StartTime.Before(o.StartTime)) {
			o.StartTime = pd.pending.StartTime // report the oldest coalesced update's latency
		}
		pd.pending, pd.hasPending = *o, true
		pd.pending.KillPodOptions = nil // kept below, or released
	}
	kpo := o.KillPodOptions
	if kpo == nil {
		return
	}
	if !t.Effects.Has(fsm.KeepNotify) {
		c.release(t.Pod, waiter)
		return
	}
	if waiter != 0 {
		pd.waiters = append(pd.waiters, waiter)
	}
	if kpo.PodStatusFunc != nil {
		pd.statusFn = kpo.PodStatusFunc
	}
}

// forget drops what the engine kept for a record that finished or was
// removed; the lifecycle record (or its absence) says all that is left.
func (c *Core) forget(uid types.UID, pd *podData) {
	if pd.syncing {
		c.emit(Effect{Kind: CancelSync, UID: uid})
	}
	c.closeWaiters(uid, pd) // rows that end a record close them; this is a backstop
	delete(c.pods, uid)
	pd.gone = true
	if pd.loops > 0 {
		c.unendedLoops[uid] = pd.loops
	}
	c.emit(Effect{Kind: StopTimer, UID: uid})
}

// namedUID is the UID an update names (even an invalid one), for the
// CloseChannel of its waiter.
func namedUID(o *UpdatePodOptions) types.UID {
	switch {
	case o.Pod != nil:
		return o.Pod.UID
	case o.RunningPod != nil:
		return o.RunningPod.ID
	}
	return ""
}

// release closes an update's kill waiter at once (the kill cannot be kept).
func (c *Core) release(uid types.UID, waiter WaiterID) {
	if waiter != 0 {
		c.emit(Effect{Kind: CloseChannel, UID: uid, Waiter: waiter})
	}
}

// lastPod is the newest real pod spec known for the record, if any.
func (pd *podData) lastPod() *v1.Pod {
	switch {
	case pd == nil:
		return nil
	case pd.hasPending && pd.pending.Pod != nil:
		return pd.pending.Pod
	}
	return pd.active.Pod
}

// Work is one sync call that a worker loop must make.
type Work struct {
	UID types.UID
	// Func is the sync function to call.
	Func       fsm.InFlight
	UpdateType UpdateType
	Pod        *v1.Pod
	MirrorPod  *v1.Pod
	RunningPod *RunningPod
	// Status is the pod's identity status when the engine has no
	// StatusCache; otherwise the shell fetches the runtime status (nil
	// for SyncTerminatingRuntimePod, which takes none).
	Status *PodStatus
	// GracePeriod is the record's grace period for SyncTerminatingPod (nil
	// when none was set).
	GracePeriod *int64
	StatusFn    func(*v1.PodStatus)
	// StartTime of the update being processed, for the latency metric.
	StartTime time.Time
}

// Next takes the pod's pending update (startPodSync): it returns the sync
// call to make, or false when the pod has nothing to run now, which ends
// its worker loop.
func (c *Core) Next(uid types.UID) (Work, bool) {
	pd := c.pods[uid]
	w, ok := c.next(uid, pd)
	if !ok {
		if pd != nil && !pd.gone { // next made no entry: it passes no update to apply
			pd.loops = max(0, pd.loops-1)
		} else if n := c.unendedLoops[uid] - 1; n <= 0 {
			delete(c.unendedLoops, uid)
		} else {
			c.unendedLoops[uid] = n
		}
	}
	return w, ok
}

func (c *Core) next(uid types.UID, pd *podData) (Work, bool) {
	rec, _ := c.machine.Get(uid)
	if pd == nil || rec.Vars.Pending != fsm.PendingQueued || rec.Vars.InFlight != fsm.InFlightNone {
		return Work{}, false
	}
	t, err := c.machine.Fire(uid, "", fsm.Dequeue, fsm.Params{GraceOverride: fsm.NoGrace})
	if err != nil {
		c.log.Error("programmer error: queued pod could not be dequeued", "pod", uid, "err", err)
		return Work{}, false
	}
	if !t.Effects.Has(fsm.Start) {
		// Parked (a static pod waits for its slot) or finished unstarted.
		if t.To.IsFinished() && pd.hasPending {
			c.metrics.observeDuration("terminated", pd.pending.StartTime, c.clock)
		}
		c.apply(t, pd, nil, 0)
		return Work{}, false
	}
	update := pd.pending
	if !pd.hasPending {
		update = UpdatePodOptions{Pod: pd.active.Pod, MirrorPod: pd.active.MirrorPod, RunningPod: pd.active.RunningPod}
	}
	pd.pending, pd.hasPending = UpdatePodOptions{}, false
	if update.Pod != nil {
		pd.active.Pod = update.Pod
	}
	pd.active.RunningPod = update.RunningPod
	if update.MirrorPod != nil {
		pd.active.MirrorPod = update.MirrorPod
	}
	pd.syncing = true
	w := Work{
		UID: uid, Func: t.Vars.InFlight, UpdateType: update.UpdateType,
		Pod: pd.active.Pod, MirrorPod: pd.active.MirrorPod, RunningPod: pd.active.RunningPod,
		StartTime: update.StartTime,
	}
	switch w.Func {
	case fsm.InFlightSyncTerminatingRuntimePod:
		return w, true // runtime-only: no status to fetch
	case fsm.InFlightSyncTerminatingPod:
		if g := t.Vars.Grace; g > 0 {
			w.GracePeriod = &g
		}
		w.StatusFn = pd.statusFn
	}
	if c.identityStatus {
		if pd.identity == nil {
			pd.identity = &PodStatus{ID: uid, Name: w.Pod.Name, Namespace: w.Pod.Namespace}
		}
		w.Status = pd.identity
	}
	return w, true
}

// podName is the namespace/name of the work's pod, or of its runtime pod
// when the engine holds no config for it.
func (w Work) podName() string {
	switch {
	case w.Pod != nil:
		return w.Pod.Namespace + "/" + w.Pod.Name
	case w.RunningPod != nil:
		return w.RunningPod.Namespace + "/" + w.RunningPod.Name
	}
	return ""
}

// resultEvents maps a sync function to its (success, failure) events (an
// array: a map lookup per sync call showed in the lifecycle's profile).
var resultEvents = [...][2]fsm.Event{
	fsm.InFlightSyncPod:                   {fsm.SyncPodDone, fsm.SyncPodFailed},
	fsm.InFlightSyncTerminatingPod:        {fsm.TerminatingDone, fsm.TerminatingFailed},
	fsm.InFlightSyncTerminatingRuntimePod: {fsm.TerminatingDone, fsm.TerminatingFailed},
	fsm.InFlightSyncTerminatedPod:         {fsm.TerminatedDone, fsm.TerminatedFailed},
}

// Done reports the outcome of a Work's sync call (semantics 1.5 step 4). A
// context.Canceled error is not a failure to back off from: the update that
// cancelled the call is already queued. A *PanicError is a failure that is
// counted, and the pod's back-off grows with each consecutive one.
func (c *Core) Done(w Work, isTerminal bool, err error) {
	panicked := isPanic(err)
	if panicked {
		c.metrics.syncPanicked(w.Func)
	}
	pd := c.pods[w.UID]
	if pd != nil {
		if panicked {
			pd.panics++
		} else {
			pd.panics = 0
		}
	}
	if int(w.Func) >= len(resultEvents) || w.Func == fsm.InFlightNone {
		c.log.Error("programmer error: outcome of no sync function", "pod", w.UID, "func", w.Func.String())
		return
	}
	events := resultEvents[w.Func]
	ev := events[0]
	switch {
	case err != nil:
		ev = events[1]
	case isTerminal && w.Func == fsm.InFlightSyncPod:
		ev = fsm.SyncPodTerminal
	}
	t, ferr := c.machine.Fire(w.UID, "", ev, fsm.Params{GraceOverride: fsm.NoGrace})
	if ferr != nil {
		c.log.Error("programmer error: sync outcome rejected", "pod", w.UID, "err", ferr)
		return
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		c.log.Info("sync failed; will retry", "pod", w.podName(), "uid", w.UID, "func", w.Func.String(), "err", err)
	}
	op := w.UpdateType.String()
	if t.Event == fsm.TerminatedDone {
		op = "terminated"
	}
	c.metrics.observeDuration(op, w.StartTime, c.clock)
	c.apply(t, pd, nil, 0)
}

// isPanic reports whether a sync call's error is (or wraps) a *PanicError.
func isPanic(err error) bool {
	if err == nil {
		return false // first: p below is moved to the heap, and most calls succeed
	}
	var p *PanicError
	return errors.As(err, &p)
}

// Timer is the pod's retry, resync or back-off timer firing.
func (c *Core) Timer(uid types.UID) {
	if _, known := c.machine.Get(uid); !known {
		return
	}
	t, err := c.machine.Fire(uid, "", fsm.Requeue, fsm.Params{GraceOverride: fsm.NoGrace})
	if err != nil {
		c.log.Error("programmer error: timer rejected", "pod", uid, "err", err)
		return
	}
	c.apply(t, c.pods[uid], nil, 0)
}

// SyncKnownPods reconciles the records with the desired pods (semantics
// 1.8) and returns every record it kept.
func (c *Core) SyncKnownPods(desired []*v1.Pod) map[types.UID]PodWorkerSync {
	want := make(map[types.UID]struct{}, len(desired))
	for _, pod := range desired {
		if pod != nil {
			want[pod.UID] = struct{}{}
		}
	}
	var before fsm.Record
	var pd *podData
	err := c.machine.SyncKnownPods(func(uid types.UID) fsm.Params {
		before, _ = c.machine.Get(uid)
		pd = c.pods[uid]
		_, desired := want[uid]
		p := fsm.Params{Orphan: !desired}
		p.GraceOverride, p.SpecGrace = graceFacts(pd.lastPod(), nil)
		return p
	}, func(t fsm.Transition) {
		if t.To == fsm.Absent && before.Vars.RestartRequested {
			c.metrics.restarted(before.Vars.Static)
		}
		c.apply(t, pd, nil, 0)
	})
	if err != nil {
		c.log.Error("programmer error: SyncKnownPods rejected", "err", err)
	}
	out := make(map[types.UID]PodWorkerSync, c.machine.Len())
	c.machine.Range(func(uid types.UID, r fsm.Record) bool {
		_, desired := want[uid]
		out[uid] = PodWorkerSync{State: workerState(r.State), Orphan: !desired, HasConfig: r.Vars.HasConfig, Static: r.Vars.Static}
		return true
	})
	c.metrics.setWorkingPods(out)
	return out
}

// CancelAll asks, with a CancelSync effect, that every sync in flight
// return (the engine stops).
func (c *Core) CancelAll() {
	for uid, pd := range c.pods {
		if pd.syncing {
			c.emit(Effect{Kind: CancelSync, UID: uid})
			pd.syncing = false
		}
	}
}

// jitter spreads a delay over [d, 1.5d), as the kubelet's requeues do: the
// default of Options.Jitter.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Int64N(int64(d)/2+1))
}
