package spec

// Table is the pod lifecycle: every transition of one UID's record. It is
// built once; callers must not modify it.
var Table = buildTable()

// Common guards and values, named after what they mean.
var (
	terminalOnBothSides = And(P(PTerminalPhase), P(PRuntimeTerminal)) // semantics T2
	deletionOrTerminal  = Or(P(PDeleting), P(PTerminalPhase))         // semantics 1.4 step 6
	idle                = Is(InFlight, "None")
	queuedAndIdle       = And(Is(Pending, "Queued"), idle)
	mayStartStatic      = And(P(PSlotFree), P(PFirstInLine))
	startableConfig     = And(V(HasConfig), Or(Not(V(Static)), V(Started)))
	orphanNeverRan      = And(P(POrphan), Not(V(Started)), Not(V(ObservedRuntime)))
	orphanThatRan       = And(P(POrphan), Or(V(Started), V(ObservedRuntime)))

	// firstGrace is the grace period computed when termination is first
	// requested (semantics 1.6): the requested override if any, else the
	// pod's spec value, never below 1.
	firstGrace = Max(If(Le(N(0), P(PGraceOverride)), P(PGraceOverride), P(PSpecGrace)), N(1))
	// shorterGrace holds when a set grace period must shrink to the override.
	shorterGrace = And(Le(N(0), P(PGraceOverride)), Lt(Max(P(PGraceOverride), N(1)), V(Grace)))
	graceUnset   = Eq(V(Grace), N(0))
	graceSet     = Not(graceUnset)
)

// Set is a row's assignment of e to v.
func Set(v *Var, e Expr) Assign { return Assign{Var: v, Value: e} }

// SetEnum assigns v the value of its domain named s.
func SetEnum(v *Var, s string) Assign { return Set(v, E(v.Domain, s)) }

func setTrue(v *Var) Assign { return Set(v, B(true)) }

var (
	queue      = SetEnum(Pending, "Queued")
	keepNotify = Set(Waiters, Or(V(Waiters), P(PNotify)))
)

type builder struct{ rows []Row }

// add appends one row. tag tells rows of the same (from, event) apart; the
// row ID is From+Event+tag.
func (b *builder) add(ref string, from State, ev Event, tag string, guard Expr, to State, eff Effect, doc string, sets ...Assign) {
	if ev.IsUpdatePod() && writes(&Row{Set: sets}, Pending) {
		eff |= TakeUpdate // an update that queues work becomes the pending update
	}
	b.rows = append(b.rows, Row{
		ID: from.String() + ev.String() + tag, Ref: ref, From: from, Event: ev,
		Guard: guard, To: to, Set: sets, Effects: eff, Doc: doc,
	})
}

// remove adds a row that deletes the record: the UID is Absent again and
// every variable returns to zero.
func (b *builder) remove(ref string, from State, ev Event, tag string, guard Expr, eff Effect, doc string) {
	b.add(ref, from, ev, tag, guard, Absent, eff, doc)
	b.rows[len(b.rows)-1].Reset = true
}

// ignore adds a row that changes nothing.
func (b *builder) ignore(ref string, from State, ev Event, tag string, guard Expr, doc string) {
	b.add(ref, from, ev, "Ignored"+tag, guard, from, 0, doc)
}

var (
	configEvents = []Event{Create, Update, Kill}
	liveStates   = []State{Waiting, Running, TerminationRequested, Terminating, Terminated}
)

func buildTable() []Row {
	b := &builder{}
	b.firstSight()
	b.waiting()
	b.running()
	for _, s := range []State{TerminationRequested, Terminating} {
		b.terminationUpdates(s)
	}
	b.terminationRequested()
	b.terminating()
	b.terminated()
	b.finished()
	for _, s := range liveStates {
		b.syncKnownPodsLive(s)
		b.requeueLive(s)
	}
	return b.rows
}

// firstSight: UpdatePod for a UID with no record creates one (T1-T4); after
// a removal the same rows start a new incarnation (T25).
func (b *builder) firstSight() {
	s := Absent
	created := []Assign{Set(Static, P(PStatic)), setTrue(HasConfig), queue}
	for _, ev := range configEvents {
		b.add("T2", s, ev, "PreTerminated", terminalOnBothSides, Terminated, 0,
			"a pod terminal in the API and in the runtime cache needs only SyncTerminatedPod",
			created...)
		trigger := deletionOrTerminal
		if ev == Kill {
			trigger = B(true)
		} else {
			b.add("T1", s, ev, "Admit", And(Not(terminalOnBothSides), Not(trigger)), Waiting, 0,
				"first sight: the record waits for the worker", created...)
		}
		guard := Not(terminalOnBothSides)
		if ev != Kill {
			guard = And(guard, trigger)
		}
		b.add("T1", s, ev, "AdmitTerminating", guard, TerminationRequested, KeepNotify,
			"first sight of a pod that is deleted, terminal or killed",
			append(created[:len(created):len(created)], terminate(ev)...)...)
	}
	b.add("T3", s, RuntimeKill, "Orphan", B(true), TerminationRequested, KeepNotify,
		"a pod known only to the runtime is terminated (grace 1 unless overridden)",
		setTrue(Deleted), setTrue(ObservedRuntime), Set(Grace, firstGrace), queue, keepNotify)
	b.ignore("T4", s, RuntimeUpdate, "", B(true), "runtime-only pods can only be killed")
	b.ignore("1.8", s, Requeue, "", B(true), "no record: a stale timer does nothing")
	b.ignore("1.8", s, SyncKnownPods, "", B(true), "no record to reconcile")
}

// terminate lists the writes of a config event that makes a record
// terminating (semantics 1.4 steps 6 and 7), besides queueing it.
func terminate(ev Event) []Assign {
	evicted := B(false)
	if ev == Kill {
		evicted = And(P(PEvict), Not(P(PDeleting)), Not(P(PTerminalPhase)))
	}
	return []Assign{Set(Deleted, P(PDeleting)), Set(Evicted, evicted), Set(Grace, firstGrace), keepNotify}
}

// notTerminating adds the UpdatePod rows of Waiting and Running: plain
// updates queue; a kill, deletion or terminal phase latches termination (T8).
func (b *builder) notTerminating(s State) {
	for _, ev := range configEvents {
		if ev != Kill {
			b.add("1.4", s, ev, "", Not(deletionOrTerminal), s, 0,
				"the latest update replaces the pending one", setTrue(HasConfig), queue)
		}
		guard := B(true)
		if ev != Kill {
			guard = deletionOrTerminal
		}
		b.add("T8", s, ev, "Terminate", guard, TerminationRequested, KeepNotify|Cancel,
			"termination is latched at once and cancels the sync in flight", append(terminate(ev), queue)...)
	}
	b.add("T8", s, RuntimeKill, "Terminate", B(true), TerminationRequested, KeepNotify|Cancel,
		"a runtime-only kill of a known pod becomes a kill of that pod",
		setTrue(Deleted), setTrue(ObservedRuntime), Set(Grace, firstGrace), queue, keepNotify)
	b.ignore("T4", s, RuntimeUpdate, "", B(true), "runtime-only pods can only be killed")
}

func (b *builder) waiting() {
	b.notTerminating(Waiting)
	b.add("T5", Waiting, Dequeue, "Start", And(queuedAndIdle, Or(Not(V(Static)), mayStartStatic)), Running, Start,
		"the pod may start: SyncPod runs",
		setTrue(Started), SetEnum(Pending, "None"), SetEnum(InFlight, "SyncPod"))
	b.add("T6", Waiting, Dequeue, "Park", And(queuedAndIdle, V(Static), Not(mayStartStatic)), Waiting, Backoff,
		"another UID holds or is ahead for the full name: keep the update, retry later",
		SetEnum(Pending, "Parked"))
}

func (b *builder) running() {
	b.notTerminating(Running)
	b.add("1.5", Running, Dequeue, "Sync", queuedAndIdle, Running, Start,
		"a started pod syncs again", SetEnum(Pending, "None"), SetEnum(InFlight, "SyncPod"))
	b.add("T10", Running, SyncPodDone, "", Is(InFlight, "SyncPod"), Running, Resync,
		"resync later", SetEnum(InFlight, "None"))
	b.add("T10", Running, SyncPodFailed, "", Is(InFlight, "SyncPod"), Running, Backoff,
		"retry after back-off", SetEnum(InFlight, "None"))
	b.add("T9", Running, SyncPodTerminal, "", Is(InFlight, "SyncPod"), Terminating, 0,
		"the pod completed by itself: terminate it now", SetEnum(InFlight, "None"), queue)
}

// terminationUpdates adds the UpdatePod rows of TerminationRequested and
// Terminating: a create only requests a restart (T13); other updates may
// shrink the grace period and register kill waiters (T12).
func (b *builder) terminationUpdates(s State) {
	b.add("T13", s, Create, "Restart", B(true), s, 0,
		"the UID was created again: restart it after it finishes", setTrue(RestartRequested))
	for _, ev := range []Event{Update, Kill, RuntimeKill} {
		var seen Assign
		if ev == RuntimeKill {
			seen = setTrue(ObservedRuntime)
		} else {
			seen = setTrue(HasConfig)
		}
		b.add("T12", s, ev, "FirstGrace", graceUnset, s, KeepNotify,
			"the first update since termination sets the grace period",
			seen, Set(Grace, firstGrace), queue, keepNotify)
		b.add("T12", s, ev, "Shorten", And(graceSet, shorterGrace), s, KeepNotify|Cancel,
			"a shorter grace period cancels the sync in flight so the next one uses it",
			seen, Set(Grace, Max(P(PGraceOverride), N(1))), queue, keepNotify)
		b.add("T12", s, ev, "", And(graceSet, Not(shorterGrace)), s, KeepNotify,
			"the grace period never grows", seen, queue, keepNotify)
	}
	b.ignore("T4", s, RuntimeUpdate, "", B(true), "runtime-only pods can only be killed")
}

func (b *builder) terminationRequested() {
	s := TerminationRequested
	b.add("T7", s, Dequeue, "NeverStart", And(queuedAndIdle, V(HasConfig), V(Static), Not(V(Started))), Finished, CloseWaiters|Exit,
		"a static pod terminated before it started never runs any sync",
		SetEnum(Pending, "None"), Set(Waiters, B(false)))
	b.add("T11", s, Dequeue, "Terminate", And(queuedAndIdle, startableConfig), Terminating, Start,
		"the worker takes the termination: SyncTerminatingPod runs",
		setTrue(Started), SetEnum(Pending, "None"), SetEnum(InFlight, "SyncTerminatingPod"))
	b.add("T11", s, Dequeue, "TerminateRuntime", And(queuedAndIdle, Not(V(HasConfig))), Terminating, Start,
		"a runtime-only pod: SyncTerminatingRuntimePod runs",
		SetEnum(Pending, "None"), SetEnum(InFlight, "SyncTerminatingRuntimePod"))
	b.add("T10", s, SyncPodDone, "", Is(InFlight, "SyncPod"), s, Resync,
		"the SyncPod that was in flight returned", SetEnum(InFlight, "None"))
	b.add("T10", s, SyncPodFailed, "", Is(InFlight, "SyncPod"), s, Backoff,
		"the SyncPod that was in flight failed or was cancelled", SetEnum(InFlight, "None"))
	b.add("T9", s, SyncPodTerminal, "", Is(InFlight, "SyncPod"), Terminating, 0,
		"the SyncPod in flight saw the pod terminal", SetEnum(InFlight, "None"), queue)
}

func (b *builder) terminating() {
	s := Terminating
	b.add("1.5", s, Dequeue, "Retry", And(queuedAndIdle, startableConfig), s, Start,
		"SyncTerminatingPod runs again, with the current grace period",
		setTrue(Started), SetEnum(Pending, "None"), SetEnum(InFlight, "SyncTerminatingPod"))
	b.add("1.5", s, Dequeue, "RetryRuntime", And(queuedAndIdle, Not(V(HasConfig))), s, Start,
		"SyncTerminatingRuntimePod runs again",
		SetEnum(Pending, "None"), SetEnum(InFlight, "SyncTerminatingRuntimePod"))
	b.add("T14", s, TerminatingDone, "", Is(InFlight, "SyncTerminatingPod"), Terminated, CloseWaiters,
		"no container runs: kill waiters are released and cleanup is queued",
		SetEnum(InFlight, "None"), Set(Waiters, B(false)), queue)
	b.remove("T15", s, TerminatingDone, "Runtime", Is(InFlight, "SyncTerminatingRuntimePod"), CloseWaiters|Exit,
		"a runtime-only pod is gone: its record is deleted")
	b.add("T16", s, TerminatingFailed, "", Or(Is(InFlight, "SyncTerminatingPod"), Is(InFlight, "SyncTerminatingRuntimePod")), s, Backoff,
		"retry after back-off", SetEnum(InFlight, "None"))
}

func (b *builder) terminated() {
	s := Terminated
	b.add("T13", s, Create, "Restart", B(true), s, 0,
		"the UID was created again: restart it after it finishes", setTrue(RestartRequested))
	for _, ev := range []Event{Update, Kill} {
		b.add("T19", s, ev, "", B(true), s, 0,
			"the update is queued; a kill's channel is closed at once", setTrue(HasConfig), queue)
	}
	b.add("T18", s, RuntimeKill, "", B(true), s, 0,
		"a stale runtime-only kill is ignored until the worker finishes", setTrue(ObservedRuntime))
	b.ignore("T4", s, RuntimeUpdate, "", B(true), "runtime-only pods can only be killed")
	b.add("T7", s, Dequeue, "NeverStart", And(queuedAndIdle, V(HasConfig), V(Static), Not(V(Started))), Finished, CloseWaiters|Exit,
		"a static pod found already terminal never starts",
		SetEnum(Pending, "None"), Set(Waiters, B(false)))
	b.add("1.5", s, Dequeue, "Cleanup", And(queuedAndIdle, startableConfig), s, Start,
		"SyncTerminatedPod runs",
		setTrue(Started), SetEnum(Pending, "None"), SetEnum(InFlight, "SyncTerminatedPod"))
	b.add("T17", s, TerminatedDone, "", Is(InFlight, "SyncTerminatedPod"), Finished, Exit,
		"cleanup done: the worker finishes and frees the static slot",
		SetEnum(InFlight, "None"), SetEnum(Pending, "None"))
	b.add("T16", s, TerminatedFailed, "", Is(InFlight, "SyncTerminatedPod"), s, Backoff,
		"retry after back-off", SetEnum(InFlight, "None"))
}

func (b *builder) finished() {
	s := Finished
	b.add("T13", s, Create, "Restart", B(true), s, 0,
		"the UID was created again: SyncKnownPods may now remove the tombstone", setTrue(RestartRequested))
	for _, ev := range []Event{Update, Kill, RuntimeKill, RuntimeUpdate} {
		b.ignore("T20", s, ev, "", B(true), "a finished record ignores updates (a kill's channel is closed at once)")
	}
	b.ignore("1.8", s, Requeue, "", B(true), "the worker is done")
	b.remove("T21", s, SyncKnownPods, "Remove", Or(P(POrphan), V(RestartRequested)), 0,
		"the tombstone of an undesired or restarting UID is removed")
	b.ignore("T21", s, SyncKnownPods, "", And(Not(P(POrphan)), Not(V(RestartRequested))),
		"a desired UID keeps its tombstone so it cannot restart")
}

// syncKnownPodsLive adds SyncKnownPods for a record that has not finished
// (semantics 1.8): orphans that never ran are removed, the others are driven
// to termination; desired records are kept as they are.
func (b *builder) syncKnownPodsLive(s State) {
	b.ignore("1.8", s, SyncKnownPods, "", Not(P(POrphan)), "a desired record is kept")
	b.remove("T22", s, SyncKnownPods, "Remove", orphanNeverRan, CloseWaiters|Exit,
		"an orphan that never ran is removed without any sync")
	if s == Waiting || s == Running {
		b.add("T23", s, SyncKnownPods, "Terminate", orphanThatRan, TerminationRequested, 0,
			"an orphan that ran is terminated with the grace of its last spec",
			setTrue(Deleted), Set(Grace, firstGrace), queue)
		return
	}
	b.add("T24", s, SyncKnownPods, "Drive", orphanThatRan, s, 0,
		"an orphan already terminating is driven on", setTrue(Deleted), queue)
}

// requeueLive adds the timer: with nothing pending and nothing in flight the
// last update runs again; a parked static pod tries to start again.
func (b *builder) requeueLive(s State) {
	ref := "1.7"
	if s == Waiting {
		ref = "T6"
	}
	b.add(ref, s, Requeue, "", And(Not(Is(Pending, "Queued")), idle), s, 0,
		"the timer queues the last update again", queue)
	b.ignore(ref, s, Requeue, "", Or(Is(Pending, "Queued"), Not(idle)), "work is already queued or in flight")
}
