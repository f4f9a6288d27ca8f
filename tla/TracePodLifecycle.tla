------------------------- MODULE TracePodLifecycle -------------------------
(***************************************************************************)
(* Trace validation: TLC replays a trace of the Go engine (NDJSON written  *)
(* by trace.Writer, see package trace and tla/README.md) against the model *)
(* PodLifecycle, one line after the other.                                 *)
(*                                                                         *)
(* Every step of this spec consumes lines of the trace and is a step of    *)
(* the model: a line of a single pod is matched by Fire (the table's row   *)
(* for the pod's state and the line's event must be enabled), the lines   *)
(* of one SyncKnownPods call by one SyncKnownPods step. After the step the *)
(* records must equal what the lines say. A line that cannot be matched   *)
(* leaves no step enabled, so TLC stops with a deadlock there: that        *)
(* deadlock is the failure signal (the cfg keeps CHECK_DEADLOCK TRUE). A   *)
(* trace matched to its end only stutters (TraceDone), which TLC does not  *)
(* report as a deadlock. There is one behaviour: every step is determined  *)
(* by its lines.                                                           *)
(*                                                                         *)
(* Limits: the model has one full name, so all static pods of a trace must *)
(* share one (ASSUME below). "synced" is not in the trace; it follows the  *)
(* SyncKnownPods steps (a call that reconciled no record writes no line).  *)
(***************************************************************************)
EXTENDS PodLifecycle, Json, Sequences, Integers, TLC

\* The trace, one record per line; tools/tlc.sh copies the file to check
\* here. Fields as trace.Writer writes them: seq, pod, fullName, event, row,
\* from, to, batch, params (a record with the fields of EmptyParams) and
\* vars (a record with the fields of EmptyRecord but state).
Trace == ndJsonDeserialize("trace.ndjson")

TraceLines == 1..Len(Trace)

\* Bindings of the model's constants (see TracePodLifecycle.cfg).
TracePods == {Trace[i].pod : i \in TraceLines}
TraceStaticPods == {Trace[i].pod : i \in {j \in TraceLines : Trace[j].fullName # ""}}
TraceGraceOverrides == {}  \* grace values come from the lines' params
TraceSpecGrace == 2        \* unused: the lines carry each pod's specGrace

\* The model has one full name: every static pod of the trace must share it.
ASSUME Cardinality({Trace[i].fullName : i \in {j \in TraceLines : Trace[j].fullName # ""}}) <= 1

VARIABLE l  \* the index of the next line to match

traceVars == <<vars, l>>

(***************************************************************************)
(* The engine deletes a removed record and reports its UID as Absent; the  *)
(* model keeps such a pod in state Removed, whose rows are the rows of     *)
(* Absent (T25). A state "Absent" in a line is the model's "Removed" for a *)
(* pod that the model has in state Removed.                                *)
(***************************************************************************)
ModelState(p, s) == IF s = "Absent" /\ rec[p].state = "Removed" THEN "Removed" ELSE s

\* The parameters of a line, field by field (the world facts are replaced
\* by the model's own in Fire and in the SyncKnownPods step, via WithWorld).
LineParams(ln) ==
    [static          |-> ln.params.static,
     deleting        |-> ln.params.deleting,
     terminalPhase   |-> ln.params.terminalPhase,
     runtimeTerminal |-> ln.params.runtimeTerminal,
     graceOverride   |-> ln.params.graceOverride,
     specGrace       |-> ln.params.specGrace,
     notify          |-> ln.params.notify,
     evict           |-> ln.params.evict,
     orphan          |-> ln.params.orphan,
     slotFree        |-> ln.params.slotFree,
     firstInLine     |-> ln.params.firstInLine]

\* The record a line says the pod has after the step, in state s.
LineRecord(ln, s) ==
    [state            |-> s,
     static           |-> ln.vars.static,
     hasConfig        |-> ln.vars.hasConfig,
     started          |-> ln.vars.started,
     deleted          |-> ln.vars.deleted,
     evicted          |-> ln.vars.evicted,
     restartRequested |-> ln.vars.restartRequested,
     observedRuntime  |-> ln.vars.observedRuntime,
     grace            |-> ln.vars.grace,
     pending          |-> ln.vars.pending,
     inFlight         |-> ln.vars.inFlight,
     waiters          |-> ln.vars.waiters]

(***************************************************************************)
(* A line of one pod (any event but SyncKnownPods): the pod is in the      *)
(* line's from state, the world facts the engine logged are the model's    *)
(* (the guards read them on Dequeue; the engine computes them for every    *)
(* event), the table's row for the line's event and params fires (Fire     *)
(* checks that one is enabled and updates rec and waiting), and the pod's  *)
(* new record is the line's to state and vars.                             *)
(***************************************************************************)
MatchLine ==
    /\ l <= Len(Trace)
    /\ LET ln == Trace[l]
           p  == ln.pod
       IN /\ ln.event # "SyncKnownPods"
          /\ rec[p].state = ModelState(p, ln.from)
          /\ ln.params.slotFree = SlotFree(p)
          /\ ln.params.firstInLine = FirstInLine(p)
          /\ Fire(p, ln.event, LineParams(ln))
          /\ rec'[p] = LineRecord(ln, ModelState(p, ln.to))
          /\ l' = l + 1

(***************************************************************************)
(* The lines of one SyncKnownPods call: consecutive lines with that event  *)
(* and one batch number. They are matched as one step, the model's         *)
(* SyncKnownPods with each pod's parameters taken from its line.           *)
(***************************************************************************)
SameBatch(i, j) ==
    /\ Trace[j].event = "SyncKnownPods"
    /\ Trace[j].batch = Trace[i].batch

\* The last line of the batch whose first line is i.
BatchEnd(i) ==
    CHOOSE j \in i..Len(Trace) :
        /\ \A m \in i..j : SameBatch(i, m)
        /\ (j = Len(Trace) \/ ~SameBatch(i, j + 1))

MatchBatch ==
    /\ l <= Len(Trace)
    /\ Trace[l].event = "SyncKnownPods"
    /\ LET last      == BatchEnd(l)
           idx       == l..last
           inBatch   == {Trace[m].pod : m \in idx}
           LineOf(q) == Trace[CHOOSE m \in idx : Trace[m].pod = q]
       IN \* batch numbers increase: no call is split by other lines
          /\ \A m \in 1..(l - 1) : Trace[m].batch < Trace[l].batch
          \* one line per pod, and one for every pod that has a record
          /\ Cardinality(inBatch) = Cardinality(idx)
          /\ \A q \in Pods : Known(q) => q \in inBatch
          /\ \A q \in inBatch : rec[q].state = ModelState(q, LineOf(q).from)
          \* pods without a line have no record: their row changes nothing
          /\ rec' = [q \in Pods |->
                        IF q \in inBatch
                        THEN Apply("SyncKnownPods", rec[q], WithWorld(q, LineParams(LineOf(q))))
                        ELSE rec[q]]
          /\ waiting' = SelectSeq(waiting, LAMBDA q : rec'[q].state = "Waiting")
          /\ synced' = TRUE
          /\ \A q \in inBatch : rec'[q] = LineRecord(LineOf(q), ModelState(q, LineOf(q).to))
          /\ l' = last + 1

\* Every line matched: stutter, so that TLC reports no deadlock.
TraceDone ==
    /\ l > Len(Trace)
    /\ UNCHANGED traceVars

TraceInit ==
    /\ Init
    /\ l = 1

TraceNext ==
    \/ MatchLine
    \/ MatchBatch
    \/ TraceDone

TraceSpec == TraceInit /\ [][TraceNext]_traceVars

=============================================================================
