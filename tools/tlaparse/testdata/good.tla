-------------------------------- MODULE good --------------------------------
(***************************************************************************)
(* Self-test input for tools/tlaparse: a small, syntactically valid spec   *)
(* exercising records, EXCEPT, CASE, quantifiers, LET and fairness.        *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS Pods, MaxRestarts

VARIABLES pod, log

vars == <<pod, log>>

Phases == {"Pending", "Running", "Succeeded", "Failed"}

TypeOK ==
    /\ pod \in [Pods -> [phase : Phases, restarts : 0..MaxRestarts]]
    /\ log \in Seq(Pods)

Init ==
    /\ pod = [p \in Pods |-> [phase |-> "Pending", restarts |-> 0]]
    /\ log = <<>>

Start(p) ==
    /\ pod[p].phase = "Pending"
    /\ pod' = [pod EXCEPT ![p].phase = "Running"]
    /\ log' = Append(log, p)

Finish(p) ==
    LET next == CASE pod[p].restarts < MaxRestarts -> "Pending"
                  [] OTHER                         -> "Failed"
    IN /\ pod[p].phase = "Running"
       /\ pod' = [pod EXCEPT ![p] = [@ EXCEPT !.phase = next,
                                             !.restarts = IF next = "Pending"
                                                          THEN @ + 1 ELSE @]]
       /\ UNCHANGED log

Next == \E p \in Pods : Start(p) \/ Finish(p)

Spec == Init /\ [][Next]_vars /\ WF_vars(Next)

RestartsBounded == \A p \in Pods : pod[p].restarts <= MaxRestarts

NoneLeftRunning == <>[](\A p \in Pods : pod[p].phase # "Running")

LogSize == Cardinality({log[i] : i \in DOMAIN log}) <= Cardinality(Pods)
=============================================================================
