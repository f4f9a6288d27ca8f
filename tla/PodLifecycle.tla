----------------------------- MODULE PodLifecycle -----------------------------
(***************************************************************************)
(* The pod lifecycle of podlife's engine: every pod UID's record moves only *)
(* through the transitions of the generated module PodLifecycleTable,      *)
(* which gen/ renders from the same table (spec/) as the Go guards that    *)
(* the engine runs (fsm/).                                                 *)
(*                                                                         *)
(* The hand-written part adds what spans pods: the static-pod slot and     *)
(* waiting order (one full name, shared by StaticPods), the "synced" flag  *)
(* of SyncKnownPods, the environment's choice of inputs, fairness, and the *)
(* invariants of shared/reference/kubelet-pod-workers.md section 3, each   *)
(* named InvN after its number there.                                      *)
(***************************************************************************)
EXTENDS PodLifecycleTable, Integers, Sequences, FiniteSets, TLC

CONSTANTS
    Pods,           \* the pod UIDs
    StaticPods,     \* the static ones; they all share one full name
    GraceOverrides, \* grace periods (seconds) that kills and deletions request
    SpecGrace       \* every pod's spec.terminationGracePeriodSeconds

ASSUME StaticPods \subseteq Pods
ASSUME GraceOverrides \subseteq 0..3 /\ SpecGrace \in 0..3

VARIABLES
    rec,     \* rec[p]: the lifecycle record of p (EmptyRecord-shaped)
    waiting, \* the static pods in state Waiting, in the order they arrived
    synced   \* SyncKnownPods has run

vars == <<rec, waiting, synced>>

(***************************************************************************)
(* The world facts that the machine computes for a pod's guards: the      *)
(* static slot is free for p, and p is first in the waiting order.         *)
(***************************************************************************)
SlotHolders == {p \in Pods : rec[p].static /\ rec[p].started /\ rec[p].state \in MayHoldSlotStates}
SlotFree(p) == IF rec[p].static THEN SlotHolders \subseteq {p} ELSE TRUE
FirstInLine(p) == rec[p].static /\ waiting # <<>> /\ Head(waiting) = p
WithWorld(p, e) == [e EXCEPT !.slotFree = SlotFree(p), !.firstInLine = FirstInLine(p)]

Range(s) == {s[i] : i \in DOMAIN s}
Without(s, p) == SelectSeq(s, LAMBDA q : q # p)

(* The waiting order after pod p's record went from r to r2. *)
NextWaiting(p, r, r2) ==
    CASE (r.static \/ r2.static) /\ r.state # "Waiting" /\ r2.state = "Waiting" -> Append(waiting, p)
      [] (r.static \/ r2.static) /\ r.state = "Waiting" /\ r2.state # "Waiting" -> Without(waiting, p)
      [] OTHER -> waiting

(***************************************************************************)
(* One event for one pod: the table's row for (state, event) whose guard   *)
(* holds fires; an event no row accepts is not a step.                    *)
(***************************************************************************)
Fire(p, ev, e) ==
    LET e2 == WithWorld(p, e)
        r2 == Apply(ev, rec[p], e2)
    IN /\ Enabled(ev, rec[p], e2)
       /\ rec' = [rec EXCEPT ![p] = r2]
       /\ waiting' = NextWaiting(p, rec[p], r2)
       /\ UNCHANGED synced

(***************************************************************************)
(* The inputs the environment sends (UpdatePod variants). Kills carry a    *)
(* completion channel; other updates do not. A runtime-only kill comes     *)
(* from housekeeping with grace 1. SyncKnownPods takes the grace of an     *)
(* orphan from its last known spec (never one with a deletion grace: such  *)
(* a pod is already terminating).                                          *)
(***************************************************************************)
PodGrace(p) == IF rec[p].hasConfig THEN SpecGrace ELSE 0

\* A deletion grace period comes only with a deletion timestamp.
DeletionGraces(d) == IF d THEN {NoGrace} \cup GraceOverrides ELSE {NoGrace}

UpdateParams(p) ==
    UNION { { [EmptyParams EXCEPT !.static = (p \in StaticPods), !.deleting = d,
                                  !.terminalPhase = tp, !.runtimeTerminal = rt,
                                  !.graceOverride = g, !.specGrace = SpecGrace] :
                tp \in BOOLEAN, rt \in BOOLEAN, g \in DeletionGraces(d) } : d \in BOOLEAN }

KillParams(p) ==
    { [EmptyParams EXCEPT !.static = (p \in StaticPods), !.evict = ev,
                          !.graceOverride = g, !.specGrace = SpecGrace, !.notify = TRUE] :
        ev \in BOOLEAN, g \in {NoGrace} \cup GraceOverrides }

RuntimeKillParams(p) ==
    [EmptyParams EXCEPT !.graceOverride = 1, !.specGrace = PodGrace(p)]

UpdatePod(p) ==
    \/ \E ev \in {"Create", "Update", "Sync"}, e \in UpdateParams(p) : Fire(p, ev, e)
    \/ \E e \in KillParams(p) : Fire(p, "Kill", e)
    \/ Fire(p, "RuntimeKill", RuntimeKillParams(p))
    \/ Fire(p, "RuntimeUpdate", EmptyParams)

(* The worker's own steps, and the outcomes of the sync functions. *)
WorkerEvents == {"Dequeue", "SyncPodDone", "SyncPodTerminal", "SyncPodFailed",
                 "TerminatingDone", "TerminatingFailed", "TerminatedDone", "TerminatedFailed"}
SuccessEvents == {"TerminatingDone", "TerminatedDone"}

Worker(p, ev) == Fire(p, ev, EmptyParams)

(* The worker's retry, resync or back-off timer. *)
Timer(p) == Fire(p, "Requeue", EmptyParams)

(***************************************************************************)
(* SyncKnownPods(desired) reconciles every record at once (reference 1.8). *)
(***************************************************************************)
SyncParams(p, desired) ==
    [EmptyParams EXCEPT !.orphan = (p \notin desired), !.specGrace = PodGrace(p)]

SyncKnownPods(desired) ==
    /\ rec' = [p \in Pods |-> Apply("SyncKnownPods", rec[p], WithWorld(p, SyncParams(p, desired)))]
    /\ waiting' = SelectSeq(waiting, LAMBDA q : rec'[q].state = "Waiting")
    /\ synced' = TRUE

Init ==
    /\ rec = [p \in Pods |-> EmptyRecord]
    /\ waiting = <<>>
    /\ synced = FALSE

Next ==
    \/ \E p \in Pods :
        \/ UpdatePod(p)
        \/ \E ev \in WorkerEvents : Worker(p, ev)
        \/ Timer(p)
    \/ \E desired \in SUBSET Pods : SyncKnownPods(desired)

(***************************************************************************)
(* Fairness: the worker's own steps are weakly fair; a sync function in    *)
(* flight eventually returns; one that keeps being retried eventually      *)
(* succeeds (strong fairness of success); the timer eventually fires.      *)
(***************************************************************************)
Fairness ==
    \A p \in Pods :
        /\ WF_vars(Worker(p, "Dequeue"))
        /\ WF_vars(\E ev \in WorkerEvents \ {"Dequeue"} : Worker(p, ev))
        /\ \A ev \in SuccessEvents : SF_vars(Worker(p, ev))
        /\ WF_vars(Timer(p))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* The engine's query methods (reference 2.1), as the Go code answers them. *)
Known(p) == rec[p].state \in HasRecordStates
IsPodKnownTerminated(p) == Known(p) /\ rec[p].state \in IsTerminatedStates
CouldHaveRunningContainers(p) ==
    IF Known(p) THEN rec[p].state \notin IsTerminatedStates ELSE ~synced
ShouldPodBeFinished(p) == IF Known(p) THEN rec[p].state \in IsFinishedStates ELSE synced
IsPodTerminationRequested(p) == Known(p) /\ rec[p].state \in TerminationRequestedStates
ShouldPodContainersBeTerminating(p) ==
    IF Known(p) THEN rec[p].state \in TerminationStartedStates ELSE synced
ShouldPodRuntimeBeRemoved(p) == IF Known(p) THEN rec[p].state \in IsTerminatedStates ELSE synced
ShouldPodContentBeRemoved(p) ==
    IF Known(p) THEN rec[p].evicted \/ (rec[p].deleted /\ rec[p].state \in IsTerminatedStates)
                ELSE synced
IsMirrorPodTerminating ==
    \E p \in SlotHolders : rec[p].state \in TerminationRequestedStates \ IsTerminatedStates

-----------------------------------------------------------------------------
(* Invariants (state predicates). *)
TypeOK ==
    /\ \A p \in Pods :
        /\ rec[p].state \in States
        /\ rec[p].pending \in PendingValues
        /\ rec[p].inFlight \in InFlightValues
        /\ rec[p].grace \in 0..3
        /\ \A f \in {"static", "hasConfig", "started", "deleted", "evicted",
                     "restartRequested", "observedRuntime", "waiters"} : rec[p][f] \in BOOLEAN
        /\ ~Known(p) => rec[p] = [EmptyRecord EXCEPT !.state = rec[p].state]
    /\ waiting \in Seq(StaticPods)
    /\ synced \in BOOLEAN

\* 2, 3, 4: terminated => requested; finished => terminated; started terminating => requested.
Inv2_3_4 ==
    /\ IsTerminatedStates \subseteq TerminationRequestedStates
    /\ IsFinishedStates \subseteq IsTerminatedStates
    /\ TerminationStartedStates \subseteq TerminationRequestedStates

\* 7: once the worker took the termination, no SyncPod runs.
Inv7 == \A p \in Pods : rec[p].state \in TerminationStartedStates => rec[p].inFlight # "SyncPod"

\* 8: SyncTerminatedPod runs only for a terminated record.
Inv8 == \A p \in Pods : rec[p].inFlight = "SyncTerminatedPod" => rec[p].state = "Terminated"

\* 13: at most one sync function per UID (one inFlight slot) and only for a record.
Inv13 == \A p \in Pods : rec[p].inFlight # "None" => Known(p) /\ rec[p].state # "Finished"

\* 18: an update is held back only for a static pod waiting for its slot.
Inv18 == \A p \in Pods : rec[p].pending = "Parked" => rec[p].state = "Waiting" /\ rec[p].static

\* 22: a grace period, once set, is at least 1; termination requested by an
\* update always carries one.
Inv22 == \A p \in Pods :
    /\ rec[p].grace # 0 => rec[p].grace >= 1
    /\ rec[p].state = "TerminationRequested" => rec[p].grace >= 1

\* 26, 27, 29 (podlife closes every channel): kill waiters exist only while
\* the pod is being terminated.
Inv26 == \A p \in Pods : rec[p].waiters => rec[p].state \in {"TerminationRequested", "Terminating"}

\* 30, 31, 33, 34: the query methods agree with one another.
Inv30 == \A p \in Pods : IsPodKnownTerminated(p) => ~CouldHaveRunningContainers(p)
Inv31 == \A p \in Pods : ShouldPodRuntimeBeRemoved(p) <=> ~CouldHaveRunningContainers(p)
Inv33 == \A p \in Pods : Known(p) /\ ShouldPodContainersBeTerminating(p) => IsPodTerminationRequested(p)
Inv34 == \A p \in Pods : Known(p) /\ ShouldPodBeFinished(p) => ShouldPodRuntimeBeRemoved(p)

\* 37: a mirror pod is kept only for a static pod terminating but not terminated.
Inv37 == IsMirrorPodTerminating => \E p \in SlotHolders : IsPodTerminationRequested(p) /\ ~IsPodKnownTerminated(p)

\* 38: at most one static UID holds the full name.
Inv38 == Cardinality(SlotHolders) <= 1

\* 39: a static pod's SyncPod runs only while it holds the slot.
Inv39 == \A p \in StaticPods : rec[p].static /\ rec[p].inFlight = "SyncPod" => p \in SlotHolders

\* 40 (structure): the waiting order lists each waiting static pod once.
Inv40 ==
    /\ Len(waiting) = Cardinality(Range(waiting))
    /\ \A p \in Pods : p \in Range(waiting) <=> (rec[p].state = "Waiting" /\ rec[p].static)

\* 41: a static pod that never started never ran a sync function.
Inv41 == \A p \in Pods : rec[p].static /\ ~rec[p].started => rec[p].inFlight = "None"

Invariants ==
    TypeOK /\ Inv2_3_4 /\ Inv7 /\ Inv8 /\ Inv13 /\ Inv18 /\ Inv22 /\ Inv26 /\ Inv30 /\ Inv31
    /\ Inv33 /\ Inv34 /\ Inv37 /\ Inv38 /\ Inv39 /\ Inv40 /\ Inv41

-----------------------------------------------------------------------------
(* Properties of steps ([][A]_vars). A record "lives on" when it exists    *)
(* before and after the step (the same incarnation).                       *)
LivesOn(p) == Known(p) /\ rec'[p].state \in HasRecordStates
WorkType(s) == IF s \in IsTerminatedStates THEN 2
               ELSE IF s \in TerminationRequestedStates THEN 1 ELSE 0

\* 1: termination, once requested, is never withdrawn.
Inv1 == [][\A p \in Pods : LivesOn(p) /\ rec[p].state \in TerminationRequestedStates
                           => rec'[p].state \in TerminationRequestedStates]_vars

\* 5: the work type only moves forward.
Inv5 == [][\A p \in Pods : LivesOn(p) => WorkType(rec'[p].state) >= WorkType(rec[p].state)]_vars

\* 6: no SyncPod starts once termination was requested.
Inv6 == [][\A p \in Pods : rec[p].inFlight # "SyncPod" /\ rec'[p].inFlight = "SyncPod"
                           => rec'[p].state = "Running"]_vars

\* 9: a runtime-only pod whose termination succeeded is deleted at once.
Inv9 == [][\A p \in Pods : rec[p].inFlight = "SyncTerminatingRuntimePod" /\ rec'[p].inFlight = "None"
                           /\ rec'[p].state # rec[p].state => rec'[p].state = "Removed"]_vars

\* 10: a UID enters Running only from Waiting (a new record).
Inv10 == [][\A p \in Pods : rec'[p].state = "Running" => rec[p].state \in {"Waiting", "Running"}]_vars

\* 11: a finished record ignores everything but a create (restartRequested).
Inv11 == [][\A p \in Pods : rec[p].state = "Finished" /\ rec'[p].state = "Finished"
                            => rec'[p] = [rec[p] EXCEPT !.restartRequested = rec'[p].restartRequested]]_vars

\* 23: the grace period never grows within a record.
Inv23 == [][\A p \in Pods : LivesOn(p) /\ rec[p].grace # 0 => rec'[p].grace \in 1..rec[p].grace]_vars

\* 36: synced never goes back.
Inv36 == [][synced => synced']_vars

\* 40 (order): a static pod starts only as the first in line.
Inv40Order == [][\A p \in StaticPods : rec[p].state = "Waiting" /\ rec'[p].state = "Running"
                                       => waiting # <<>> /\ Head(waiting) = p]_vars

\* 44: an orphan that ran (or was seen in the runtime) is removed only once
\* finished, or when its runtime-only termination succeeded.
Inv44 == [][\A p \in Pods : Known(p) /\ rec[p].state # "Finished" /\ rec'[p].state = "Removed"
                            => \/ ~rec[p].started /\ ~rec[p].observedRuntime
                               \/ rec[p].inFlight = "SyncTerminatingRuntimePod"]_vars

StepProperties == Inv1 /\ Inv5 /\ Inv6 /\ Inv9 /\ Inv10 /\ Inv11 /\ Inv23 /\ Inv36 /\ Inv40Order /\ Inv44

-----------------------------------------------------------------------------
(* Liveness, under Fairness. *)

\* Every pod whose termination was requested reaches Finished or Removed.
TerminationCompletes ==
    \A p \in Pods : rec[p].state \in TerminationRequestedStates \ IsFinishedStates
                    ~> rec[p].state \in {"Finished", "Removed"}

\* Every kill's completion channel is eventually closed.
KillsComplete == \A p \in Pods : rec[p].waiters ~> ~rec[p].waiters

\* A non-static pod that waits to start eventually starts, unless it is
\* terminated or removed first.
DesiredPodsStart ==
    \A p \in Pods \ StaticPods : rec[p].state = "Waiting" ~> rec[p].state # "Waiting"

=============================================================================
