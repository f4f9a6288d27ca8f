---------------------- MODULE TraceContainerLifecycle ----------------------
(***************************************************************************)
(* Trace validation of the container lifecycle: TLC replays a trace of     *)
(* container decisions (NDJSON written by trace/container.Recorder, see    *)
(* that package and tla/README.md) against the generated table            *)
(* ContainerLifecycleTable, one line after the other.                      *)
(*                                                                         *)
(* A line is one transition of one container of one pod: the container's  *)
(* record before it (from, before), the event and its params (the         *)
(* container's spec and the pod-level facts the plan computed), and what   *)
(* the plan says happened (row, to, after, effects). Each step of this     *)
(* spec matches the next line: CStep for the record before, the event and  *)
(* the params must fire a row (s.row # ""), and it must be the line's row, *)
(* with the line's state and record after and the line's effects. The     *)
(* params are taken as the line gives them: the pod-level facts are the    *)
(* plan's view of the runtime, which the trace does not otherwise carry.  *)
(*                                                                         *)
(* The lines of one container in one sync form one history: the record   *)
(* before a line is the record after the container's previous line if     *)
(* that line has the same sync number (a container is the pair pod,       *)
(* container). Its first line in a sync may start from any record: the    *)
(* plan observes its containers afresh in each sync, and the runtime's    *)
(* inputs (an exit, a probe's success) change records between syncs       *)
(* without a line. Lines of sync 0 (a recorder that sees every            *)
(* transition) all chain. seq is the line's number; a pod's sync numbers  *)
(* never go back. The container's spec (kind, policy, rule) is the same   *)
(* on all its lines; a pod's podNever is the same and its sandbox         *)
(* generation never goes back.                                            *)
(*                                                                         *)
(* A line that cannot be matched leaves no step enabled: TLC stops with a  *)
(* deadlock there (the cfg keeps CHECK_DEADLOCK TRUE), and Stuck prints    *)
(* first why ("line N: ..."). A trace matched to its end only stutters     *)
(* (TraceDone). There is one behaviour. A trace that is not well-formed    *)
(* (empty, a field missing or extra, an unknown event or state) fails an   *)
(* ASSUME before any state is computed; a value of the wrong type (a       *)
(* string for a boolean) stops TLC with an evaluation error.               *)
(*                                                                         *)
(* Limits: the pod-level invariants of ContainerLifecycleProperties read   *)
(* the whole pod (every container, the sandbox, the phase), which a trace  *)
(* of transitions does not carry: they are not checked here. A trace that  *)
(* lost its last lines, or a container's first lines in a sync, passes.    *)
(***************************************************************************)
EXTENDS ContainerLifecycleTable, Json, Sequences, Integers, FiniteSets, TLC

\* The trace, one record per line; tools/tlc.sh copies the file to check
\* here.
Trace == ndJsonDeserialize("trace.ndjson")

TraceLines == 1..Len(Trace)

\* An empty trace checks nothing: refuse it.
ASSUME Len(Trace) > 0

\* Every line has exactly the fields the Recorder writes; params, before and
\* after exactly the fields of the table's EmptyFacts and EmptyContainer
\* (but state): a field the table lacks, or a missing one, is an error.
LineFields == {"seq", "pod", "sync", "container", "event", "row", "from", "to", "params", "before", "after", "effects"}
RecordFields == DOMAIN EmptyContainer \ {"state"}
ASSUME \A i \in TraceLines :
    /\ DOMAIN Trace[i] = LineFields
    /\ DOMAIN Trace[i].params = DOMAIN EmptyFacts
    /\ DOMAIN Trace[i].before = RecordFields
    /\ DOMAIN Trace[i].after = RecordFields
    /\ Trace[i].event \in ContainerEvents
    /\ Trace[i].from \in ContainerStates
    /\ Trace[i].to \in ContainerStates

\* A container of the trace: its pod and its name.
Key(i) == <<Trace[i].pod, Trace[i].container>>
Keys == {Key(i) : i \in TraceLines}
TracePods == {Trace[i].pod : i \in TraceLines}

VARIABLES
    l,        \* the index of the next line to match
    last,     \* last[k]: the index of container k's latest matched line (0: none)
    lastPod   \* lastPod[p]: the index of pod p's latest matched line (0: none)

traceVars == <<l, last, lastPod>>

\* The container record a line gives in state s with the variables vs.
Rec(s, vs) == [f \in DOMAIN EmptyContainer |-> IF f = "state" THEN s ELSE vs[f]]
RecBefore(ln) == Rec(ln.from, ln.before)
RecAfter(ln) == Rec(ln.to, ln.after)

EffectSet(ln) == {ln.effects[j] : j \in DOMAIN ln.effects}

SameSpec(a, b) == a.kind = b.kind /\ a.policy = b.policy /\ a.rule = b.rule

(***************************************************************************)
(* Why(n): why line n (the next one) does not match, or "" when it does.  *)
(* The checks in order: its number; its container's spec, its pod's sync  *)
(* and spec; the record before against the container's previous line in  *)
(* the same sync; then the row CStep fires for that record, the event and *)
(* the params, and what it leaves.                                         *)
(***************************************************************************)
Why(n) ==
    LET ln   == Trace[n]
        k    == Key(n)
        prev == last[k]
        prevPod == lastPod[ln.pod]
        s    == CStep(ln.event, RecBefore(ln), ln.params)
        at   == "line " \o ToString(n) \o " (" \o ln.container \o " " \o ln.event \o "): "
    IN CASE ln.seq # n ->
              at \o "seq is " \o ToString(ln.seq) \o ", not " \o ToString(n)
         [] prev # 0 /\ ~SameSpec(Trace[prev].params, ln.params) ->
              at \o "the container's spec changed since line " \o ToString(prev)
         [] prevPod # 0 /\ Trace[prevPod].sync > ln.sync ->
              at \o "the pod's sync went back from " \o ToString(Trace[prevPod].sync)
         [] prevPod # 0 /\ Trace[prevPod].params.podNever # ln.params.podNever ->
              at \o "the pod's podNever changed since line " \o ToString(prevPod)
         [] prevPod # 0 /\ Trace[prevPod].params.sandbox > ln.params.sandbox ->
              at \o "the pod's sandbox went back from " \o ToString(Trace[prevPod].params.sandbox)
         [] prev # 0 /\ Trace[prev].sync = ln.sync /\ RecBefore(ln) # RecAfter(Trace[prev]) ->
              at \o "the record before, " \o ToString(RecBefore(ln))
                 \o ", is not the one the container's previous line left, "
                 \o ToString(RecAfter(Trace[prev])) \o " (line " \o ToString(prev) \o ")"
         [] s.row = "" ->
              at \o "no row of " \o ln.event \o " fires in " \o ln.from \o " with these params"
         [] s.row # ln.row ->
              at \o "the row that fires is " \o s.row \o ", not " \o ln.row
         [] s.next # RecAfter(ln) ->
              at \o "row " \o s.row \o " leaves " \o ToString(s.next) \o ", not " \o ToString(RecAfter(ln))
         [] s.eff # EffectSet(ln) \/ Cardinality(EffectSet(ln)) # Len(ln.effects) ->
              at \o "row " \o s.row \o " has the effects " \o ToString(s.eff) \o ", not " \o ToString(ln.effects)
         [] OTHER -> ""

MatchLine ==
    /\ l <= Len(Trace)
    /\ Why(l) = ""
    /\ last' = [last EXCEPT ![Key(l)] = l]
    /\ lastPod' = [lastPod EXCEPT ![Trace[l].pod] = l]
    /\ l' = l + 1

\* The next line does not match: say why, and take no step (a deadlock).
Stuck ==
    /\ l <= Len(Trace)
    /\ Why(l) # ""
    /\ PrintT(Why(l))
    /\ FALSE

\* Every line matched: stutter, so that TLC reports no deadlock.
TraceDone ==
    /\ l > Len(Trace)
    /\ UNCHANGED traceVars

TraceInit ==
    /\ l = 1
    /\ last = [k \in Keys |-> 0]
    /\ lastPod = [p \in TracePods |-> 0]

TraceNext ==
    \/ MatchLine
    \/ Stuck
    \/ TraceDone

TraceSpec == TraceInit /\ [][TraceNext]_traceVars

=============================================================================
