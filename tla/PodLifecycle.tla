----------------------------- MODULE PodLifecycle -----------------------------
(***************************************************************************)
(* The pod lifecycle of podlife's engine (docs/semantics.md). Every pod    *)
(* UID's record moves only through the transitions of the generated module *)
(* PodLifecycleTable, which gen/ renders from the same table (spec/) as    *)
(* the Go guards the engine runs (fsm/).                                   *)
(*                                                                         *)
(* This hand-written part adds what spans pods (the static-pod slot and    *)
(* waiting order of one full name shared by StaticPods, the "synced" flag  *)
(* of SyncKnownPods), the effects the engine's core asks its shell to      *)
(* carry out (a pod's worker loop, its timer, the kill completion channels *)
(* it holds: semantics E1-E3), the environment's inputs and fairness. The  *)
(* properties are generated into PodLifecycleProperties from spec/ too.    *)
(***************************************************************************)
EXTENDS PodLifecycleTable, Integers, Sequences, FiniteSets, TLC

CONSTANTS
    Pods,           \* the pod UIDs
    StaticPods,     \* the static ones; they all share one full name
    GraceOverrides, \* grace periods (seconds) that kills and deletions request
    SpecGrace,      \* every pod's spec.terminationGracePeriodSeconds
    KillChannels,   \* a kill is sent only while fewer of a pod's channels are open
    RuntimePods,    \* the environment sends updates of runtime-only pods
    TerminalPhases  \* updates may carry a terminal API phase

ASSUME StaticPods \subseteq Pods
ASSUME GraceOverrides \subseteq GraceValues /\ SpecGrace \in GraceValues
ASSUME KillChannels \in ChannelsValues /\ RuntimePods \in BOOLEAN /\ TerminalPhases \in BOOLEAN

\* Semantics 1.3 (the kubelet's invariants 2, 3 and 4): the derived sets of
\* states nest; they are facts about constants.
ASSUME /\ IsTerminatedStates \subseteq TerminationRequestedStates
       /\ IsFinishedStates \subseteq IsTerminatedStates
       /\ TerminationStartedStates \subseteq TerminationRequestedStates

VARIABLES
    rec,      \* rec[p]: the lifecycle record of p (EmptyRecord-shaped)
    waiting,  \* the static pods in state Waiting, in the order they arrived
    synced,   \* SyncKnownPods has run
    loop,     \* loop[p]: a worker loop of p was started (RunLoop) and runs
    timer,    \* timer[p]: p's timer is armed (ArmTimer)
    channels  \* channels[p]: kill completion channels the engine holds for p

vars == <<rec, waiting, synced, loop, timer, channels>>

(***************************************************************************)
(* The world facts the machine computes for a pod's guards: the static     *)
(* slot is free for p, and p is first in the waiting order.                *)
(***************************************************************************)
SlotHolders == {p \in Pods : rec[p].static /\ rec[p].started /\ rec[p].state \in MayHoldSlotStates}
SlotFree(p) == IF rec[p].static THEN SlotHolders \subseteq {p} ELSE TRUE
FirstInLine(p) == rec[p].static /\ waiting # <<>> /\ Head(waiting) = p
WithWorld(p, e) == [e EXCEPT !.slotFree = SlotFree(p), !.firstInLine = FirstInLine(p)]

Known(p) == rec[p].state \in HasRecordStates
Live(r) == r.state \in HasRecordStates \ IsFinishedStates

Without(s, p) == SelectSeq(s, LAMBDA q : q # p)

(* The waiting order after pod p's record went from r to r2. *)
NextWaiting(p, r, r2) ==
    CASE (r.static \/ r2.static) /\ r.state # "Waiting" /\ r2.state = "Waiting" -> Append(waiting, p)
      [] (r.static \/ r2.static) /\ r.state = "Waiting" /\ r2.state # "Waiting" -> Without(waiting, p)
      [] OTHER -> waiting

(***************************************************************************)
(* The effects of a row that fired for p (worker.Core's apply), as the     *)
(* values of p's shell variables after it: s is the Step (row, next record *)
(* and the row's effects), notify that the input carried a kill           *)
(* completion channel, t0 p's timer before the effects. The engine keeps   *)
(* data only for a live record (or one an update makes live); without it  *)
(* a row has no effect beyond the record, and a channel is closed at once. *)
(*   - a channel is kept (KeepNotify) until CloseWaiters, or the end of   *)
(*     the record, closes every kept one (E1);                            *)
(*   - Resync and Backoff arm the timer unless work is queued; the end of  *)
(*     the record (Exit, or removal) stops it (E2, E3);                   *)
(*   - queued work with nothing in flight starts the pod's worker loop    *)
(*     unless one runs (E2). A loop ends only when it finds no work.      *)
(***************************************************************************)
ShellAfter(p, s, notify, t0) ==
    LET r2     == s.next
        data   == Live(rec[p]) \/ Live(r2)
        ends   == "Exit" \in s.eff \/ r2.state = "Absent"
        queued == r2.pending = "Queued"
        kept   == notify /\ "KeepNotify" \in s.eff
    IN IF ~data THEN [loop |-> loop[p], timer |-> t0, channels |-> channels[p]]
       ELSE [loop     |-> loop[p] \/ (~ends /\ queued /\ r2.inFlight = "None"),
             timer    |-> IF ends THEN FALSE
                          ELSE t0 \/ (~queued /\ ({"Resync", "Backoff"} \cap s.eff # {})),
             channels |-> IF ends \/ "CloseWaiters" \in s.eff THEN 0
                          ELSE channels[p] + (IF kept THEN 1 ELSE 0)]

(* Pod p's record takes step s; a is its shell after the effects. *)
Take(p, s, a) ==
    /\ rec' = [rec EXCEPT ![p] = s.next]
    /\ waiting' = NextWaiting(p, rec[p], s.next)
    /\ loop' = [loop EXCEPT ![p] = a.loop]
    /\ timer' = [timer EXCEPT ![p] = a.timer]
    /\ channels' = [channels EXCEPT ![p] = a.channels]
    /\ UNCHANGED synced

(* An input e for p through event ev; every row of an outside event is total. *)
Deliver(p, ev, e) ==
    LET s == Step(ev, rec[p], WithWorld(p, e))
    IN /\ s.row # ""
       /\ Take(p, s, ShellAfter(p, s, e.notify, timer[p]))

(***************************************************************************)
(* The inputs the environment sends (UpdatePod variants). A kill carries a *)
(* completion channel and is sent only while fewer than KillChannels of   *)
(* p's are open; other updates carry none. A runtime-only kill comes from *)
(* housekeeping with grace 1. A runtime status counts as terminal only    *)
(* for a terminal pod (the engine reads the cache only then). SyncKnownPods*)
(* takes the grace of an orphan from its last known spec. RuntimePods and *)
(* TerminalPhases turn inputs off, for bounds TLC's liveness check fits.  *)
(***************************************************************************)
PodGrace(p) == IF rec[p].hasConfig THEN SpecGrace ELSE 0

\* A deletion grace period comes only with a deletion timestamp.
DeletionGraces(d) == IF d THEN {NoGrace} \cup GraceOverrides ELSE {NoGrace}

\* (terminal phase, runtime status terminal) of an update.
Terminal == IF TerminalPhases THEN {<<FALSE, FALSE>>, <<TRUE, FALSE>>, <<TRUE, TRUE>>}
                              ELSE {<<FALSE, FALSE>>}

UpdateParams(p) ==
    UNION { { [EmptyParams EXCEPT !.static = (p \in StaticPods), !.deleting = d,
                                  !.terminalPhase = t[1], !.runtimeTerminal = t[2],
                                  !.graceOverride = g, !.specGrace = SpecGrace] :
                t \in Terminal,
                g \in DeletionGraces(d) } : d \in BOOLEAN }

KillParams(p) ==
    { [EmptyParams EXCEPT !.static = (p \in StaticPods), !.evict = ev,
                          !.graceOverride = g, !.specGrace = SpecGrace, !.notify = TRUE] :
        ev \in BOOLEAN, g \in {NoGrace} \cup GraceOverrides }

RuntimeKillParams(p) ==
    [EmptyParams EXCEPT !.graceOverride = 1, !.specGrace = PodGrace(p)]

UpdatePod(p) ==
    \/ \E ev \in {"Create", "Update"}, e \in UpdateParams(p) : Deliver(p, ev, e)
    \/ channels[p] < KillChannels /\ \E e \in KillParams(p) : Deliver(p, "Kill", e)
    \/ RuntimePods /\ Deliver(p, "RuntimeKill", RuntimeKillParams(p))
    \/ RuntimePods /\ Deliver(p, "RuntimeUpdate", EmptyParams)

(***************************************************************************)
(* The pod's worker loop (semantics 1.5): between sync calls it asks the   *)
(* core for work (Core.Next): Dequeue fires if work is queued; the loop    *)
(* goes on only if that started a sync call, and ends otherwise.           *)
(***************************************************************************)
LoopNext(p) ==
    /\ loop[p]
    /\ rec[p].inFlight = "None"
    /\ LET s == Step("Dequeue", rec[p], WithWorld(p, EmptyParams))
           a == ShellAfter(p, s, FALSE, timer[p])
       IN IF s.row # ""
          THEN Take(p, s, [a EXCEPT !.loop = "Start" \in s.eff])
          ELSE /\ loop' = [loop EXCEPT ![p] = FALSE]
               /\ UNCHANGED <<rec, waiting, synced, timer, channels>>

(* The sync call in flight returns (Core.Done) with outcome ev. *)
Outcomes == {"SyncPodDone", "SyncPodTerminal", "SyncPodFailed", "TerminatingDone",
             "TerminatingFailed", "TerminatedDone", "TerminatedFailed"}
SuccessEvents == {"TerminatingDone", "TerminatedDone"}

SyncReturns(p, ev) ==
    /\ rec[p].inFlight # "None"
    /\ LET s == Step(ev, rec[p], WithWorld(p, EmptyParams))
       IN /\ s.row # ""
          /\ Take(p, s, ShellAfter(p, s, FALSE, timer[p]))

(* The pod's armed timer fires (Core.Timer): it is used up, and queues the *)
(* pod's last update again if nothing is queued or in flight.             *)
TimerFires(p) ==
    /\ timer[p]
    /\ IF Known(p)
       THEN LET s == Step("Requeue", rec[p], WithWorld(p, EmptyParams))
            IN Take(p, s, ShellAfter(p, s, FALSE, FALSE))
       ELSE /\ timer' = [timer EXCEPT ![p] = FALSE]
            /\ UNCHANGED <<rec, waiting, synced, loop, channels>>

(***************************************************************************)
(* SyncKnownPods(desired) reconciles every record at once (semantics 1.8). *)
(***************************************************************************)
SyncParams(p, desired) ==
    [EmptyParams EXCEPT !.orphan = (p \notin desired), !.specGrace = PodGrace(p)]

SyncKnownPods(desired) ==
    LET S == [p \in Pods |-> Step("SyncKnownPods", rec[p], WithWorld(p, SyncParams(p, desired)))]
        A == [p \in Pods |-> ShellAfter(p, S[p], FALSE, timer[p])]
    IN /\ rec' = [p \in Pods |-> S[p].next]
       /\ waiting' = SelectSeq(waiting, LAMBDA q : rec'[q].state = "Waiting")
       /\ synced' = TRUE
       /\ loop' = [p \in Pods |-> A[p].loop]
       /\ timer' = [p \in Pods |-> A[p].timer]
       /\ channels' = [p \in Pods |-> A[p].channels]

Init ==
    /\ rec = [p \in Pods |-> EmptyRecord]
    /\ waiting = <<>>
    /\ synced = FALSE
    /\ loop = [p \in Pods |-> FALSE]
    /\ timer = [p \in Pods |-> FALSE]
    /\ channels = [p \in Pods |-> 0]

Next ==
    \/ \E p \in Pods :
        \/ UpdatePod(p)
        \/ LoopNext(p)
        \/ \E ev \in Outcomes : SyncReturns(p, ev)
        \/ TimerFires(p)
    \/ \E desired \in SUBSET Pods : SyncKnownPods(desired)

(***************************************************************************)
(* Fairness: a pod's worker loop keeps asking for work; a sync call in     *)
(* flight eventually returns; one that keeps being retried eventually      *)
(* succeeds (strong fairness of success); an armed timer eventually fires. *)
(***************************************************************************)
Fairness ==
    \A p \in Pods :
        /\ WF_vars(LoopNext(p))
        /\ WF_vars(\E ev \in Outcomes : SyncReturns(p, ev))
        /\ \A ev \in SuccessEvents : SF_vars(SyncReturns(p, ev))
        /\ WF_vars(TimerFires(p))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* The engine's query methods (semantics 2.1), as the Go code answers them; *)
(* TestQueriesFollowTheirDefinitions checks the Go side against them.       *)
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
=============================================================================
