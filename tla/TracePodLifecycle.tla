------------------------- MODULE TracePodLifecycle -------------------------
(***************************************************************************)
(* Trace validation: TLC replays a trace of the Go engine (NDJSON written  *)
(* by trace.Writer, see package trace and tla/README.md) against the model *)
(* PodLifecycle, one line after the other.                                 *)
(*                                                                         *)
(* Every step of this spec consumes lines of the trace and is a step of    *)
(* the model's records: a line of a single pod is matched by the table's  *)
(* Step for the pod's record and the line's event and params (a row must *)
(* fire), the lines of one SyncKnownPods call by one step of the model's  *)
(* SyncKnownPods. Every field of a line is checked: seq is the line's     *)
(* number; pod, event, params pick the step; row is the name of the row   *)
(* that fires (Step's row); from and to the pod's state before and after; *)
(* vars its record after; fullName is set exactly for static records;     *)
(* batch is 0 but for SyncKnownPods, whose batch numbers increase; the    *)
(* world facts slotFree and firstInLine are the ones the model computes.  *)
(* A params field that the fired row does not read cannot be checked (the *)
(* model does not bound them). A line that cannot be matched leaves no    *)
(* step enabled, so TLC stops with a deadlock there: that deadlock is the *)
(* failure signal (the cfg keeps CHECK_DEADLOCK TRUE). A trace matched to *)
(* its end only stutters (TraceDone), which TLC does not report as a      *)
(* deadlock. There is one behaviour: every step is determined by its      *)
(* lines. A trace that is not well-formed (empty, a field missing or       *)
(* extra, an unknown event or state, static pods of two full names) fails *)
(* an ASSUME before any state is computed.                                 *)
(*                                                                         *)
(* The engine deletes a removed record: a line that removes one goes to    *)
(* Absent, and a new incarnation of the UID fires the rows of Absent, as   *)
(* in the model.                                                           *)
(*                                                                         *)
(* Limits: the model has one full name, so all static pods of a trace must *)
(* share one (ASSUME below). "synced" is not in the trace; it follows the  *)
(* SyncKnownPods steps (a call that reconciled no record writes no line).  *)
(* The trace writer is an fsm.Observer and sees only transitions, not the  *)
(* effects the engine's shell carries out: the shell variables loop, timer *)
(* and channels keep their Init values, the row's effects (Step's eff) are *)
(* not checked, and only the invariants that read records alone are       *)
(* checked (see TracePodLifecycle.cfg). A trace that lost its last lines  *)
(* is a prefix of a behaviour and passes.                                  *)
(***************************************************************************)
EXTENDS PodLifecycleProperties, Json, Sequences, Integers, TLC

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
TraceKillChannels == 1     \* unused: the trace has no completion channels
TraceRuntimePods == TRUE   \* unused: the lines say which inputs came
TraceTerminalPhases == TRUE

\* An empty trace checks nothing: refuse it.
ASSUME Len(Trace) > 0

\* Every line has exactly the fields trace.Writer writes, and its params and
\* vars exactly the fields of the model's EmptyParams and EmptyRecord (but
\* state): a field the model does not check, or lacks, is an error. Events
\* and states are the model's (there is no event Sync and no state Removed).
LineFields == {"seq", "pod", "fullName", "event", "row", "from", "to", "batch", "params", "vars"}
ASSUME \A i \in TraceLines :
    /\ DOMAIN Trace[i] = LineFields
    /\ DOMAIN Trace[i].params = DOMAIN EmptyParams
    /\ DOMAIN Trace[i].vars = DOMAIN EmptyRecord \ {"state"}
    /\ Trace[i].event \in Events
    /\ Trace[i].from \in States
    /\ Trace[i].to \in States

\* The model has one full name: every static pod of the trace must share it.
ASSUME Cardinality({Trace[i].fullName : i \in {j \in TraceLines : Trace[j].fullName # ""}}) <= 1

VARIABLE l  \* the index of the next line to match

traceVars == <<vars, l>>

\* The effects of the engine's shell are not in the trace.
shellVars == <<loop, timer, channels>>

\* The parameters of a line, every field of the model's EmptyParams (the
\* world facts are replaced by the model's own via WithWorld, and checked
\* separately).
LineParams(ln) == [f \in DOMAIN EmptyParams |-> ln.params[f]]

\* The record a line says the pod has after the step, in state s: every
\* field of the model's EmptyRecord.
LineRecord(ln, s) == [f \in DOMAIN EmptyRecord |-> IF f = "state" THEN s ELSE ln.vars[f]]

\* The line of pod p names a full name exactly when p has a static record:
\* the record the line creates or changes, or the one it removes.
FullNameOK(p, ln) ==
    (ln.fullName # "") = IF rec'[p].state \in HasRecordStates THEN rec'[p].static
                         ELSE Known(p) /\ rec[p].static

\* The world facts of states that are not the current one: the model's
\* SlotFree and FirstInLine with other records and another waiting order.
World(r, w) == INSTANCE PodLifecycle WITH rec <- r, waiting <- w

(***************************************************************************)
(* A line of one pod (any event but SyncKnownPods): the pod is in the      *)
(* line's from state, the world facts the engine logged are the model's    *)
(* (the guards read them on Dequeue; the engine computes them for every    *)
(* event), the table's Step for the line's event and params fires a row   *)
(* (as Deliver, LoopNext, SyncReturns and TimerFires require), that row is *)
(* the line's, and the pod's new record is the line's to state and vars.   *)
(* The waiting order follows as in the model's Take.                       *)
(***************************************************************************)
MatchLine ==
    /\ l <= Len(Trace)
    /\ LET ln == Trace[l]
           p  == ln.pod
           s  == Step(ln.event, rec[p], WithWorld(p, LineParams(ln)))
       IN /\ ln.event # "SyncKnownPods"
          /\ ln.seq = l
          /\ ln.batch = 0
          /\ rec[p].state = ln.from
          /\ ln.params.slotFree = SlotFree(p)
          /\ ln.params.firstInLine = FirstInLine(p)
          /\ s.row # ""
          /\ s.row = ln.row
          /\ s.next = LineRecord(ln, ln.to)
          /\ rec' = [rec EXCEPT ![p] = s.next]
          /\ waiting' = NextWaiting(p, rec[p], s.next)
          /\ UNCHANGED synced
          /\ UNCHANGED shellVars
          /\ FullNameOK(p, ln)
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
           S(q)      == Step("SyncKnownPods", rec[q], WithWorld(q, LineParams(LineOf(q))))
           \* The engine fires the lines of a call one by one: a line's world
           \* facts follow the records of the call's earlier lines.
           Before(m) == [q \in Pods |->
                            IF \E k \in l..(m - 1) : Trace[k].pod = q
                            THEN LineRecord(LineOf(q), LineOf(q).to)
                            ELSE rec[q]]
           WaitingBefore(m) == SelectSeq(waiting, LAMBDA q : Before(m)[q].state = "Waiting")
       IN \* batch numbers increase: no call is split by other lines
          /\ \A m \in 1..(l - 1) : Trace[m].batch < Trace[l].batch
          /\ \A m \in idx : Trace[m].seq = m
          \* one line per pod, and one for every pod that has a record
          /\ Cardinality(inBatch) = Cardinality(idx)
          /\ \A q \in Pods : Known(q) => q \in inBatch
          /\ \A q \in inBatch : rec[q].state = LineOf(q).from
          /\ \A m \in idx :
                /\ Trace[m].params.slotFree = World(Before(m), WaitingBefore(m))!SlotFree(Trace[m].pod)
                /\ Trace[m].params.firstInLine = World(Before(m), WaitingBefore(m))!FirstInLine(Trace[m].pod)
          \* each line's row fires and is the one the line names
          /\ \A q \in inBatch :
                /\ S(q).row # ""
                /\ S(q).row = LineOf(q).row
          \* pods without a line have no record: their row changes nothing
          /\ rec' = [q \in Pods |-> IF q \in inBatch THEN S(q).next ELSE rec[q]]
          /\ waiting' = SelectSeq(waiting, LAMBDA q : rec'[q].state = "Waiting")
          /\ synced' = TRUE
          /\ UNCHANGED shellVars
          /\ \A q \in inBatch :
                /\ rec'[q] = LineRecord(LineOf(q), LineOf(q).to)
                /\ FullNameOK(q, LineOf(q))
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
