-------------------------- MODULE ContainerLifecycle --------------------------
(***************************************************************************)
(* The containers of one pod (kubelet: kuberuntime's computePodActions     *)
(* and computeInitContainerActions). Every container's record moves only  *)
(* through the rows of the generated module ContainerLifecycleTable, which *)
(* gen/ renders from the same table (container.Table) as the Go guards *)
(* (fsm/container).                                                        *)
(*                                                                         *)
(* One TLC state is the pod: a record per container (its state, the       *)
(* sandbox generation of its instance, startup, last exit code, back-off  *)
(* level, a pending replacement), the pod's sandbox generation and        *)
(* readiness, whether it terminates, and its phase. This hand-written     *)
(* part computes the pod-level facts each container's rows read (Facts),  *)
(* the phase, the sandbox's death and re-creation, the runtime's inputs   *)
(* and fairness.                                                           *)
(***************************************************************************)
EXTENDS ContainerLifecycleTable, Integers, FiniteSets

CONSTANTS
    Kinds,        \* Kinds[i]: container i's kind; the init order (init containers and sidecars) comes first
    Policies,     \* Policies[i]: its effective restart policy
    Rules,        \* Rules[i]: its restartPolicyRules restart it on the exit code "Rule"
    PodNever,     \* the pod's restartPolicy is Never
    ExitCodes,    \* ExitCodes[i]: the exit codes the runtime reports for container i
    MaxSandbox,   \* the last sandbox generation: the sandbox dies at most MaxSandbox times
    SpecChanges,  \* the environment changes the images of sidecars and regular containers
    Probes,       \* liveness probes may fail, instances may run long enough to reset the back-off
    Terminations  \* the pod may be deleted

Ctrs == DOMAIN Kinds
InitOrder == {i \in Ctrs : Kinds[i] \in {"Init", "Sidecar"}}

ASSUME /\ \A i \in Ctrs : Kinds[i] \in ContainerKindValues /\ Policies[i] \in RestartPolicyValues
                            /\ Rules[i] \in BOOLEAN
       /\ \A i \in InitOrder : \A j \in Ctrs \ InitOrder : i < j
       /\ DOMAIN Policies = Ctrs /\ DOMAIN Rules = Ctrs
       /\ DOMAIN ExitCodes = Ctrs
       /\ \A i \in Ctrs : ExitCodes[i] \subseteq {"Zero", "Rule", "Other"} /\ ExitCodes[i] # {}
       /\ MaxSandbox \in GenValues /\ PodNever \in BOOLEAN
       /\ SpecChanges \in BOOLEAN /\ Probes \in BOOLEAN /\ Terminations \in BOOLEAN

VARIABLES
    ctr,          \* ctr[i]: container i's record (EmptyContainer-shaped)
    sandbox,      \* the pod's current sandbox generation
    ready,        \* the current sandbox is ready
    terminating,  \* the pod terminates
    phase,        \* the pod's phase
    facts         \* facts[i]: FactsOf(i, ...) of the other variables, kept so that
                  \* properties and guards read them without computing them again

vars == <<ctr, sandbox, ready, terminating, phase, facts>>

\* The container that gates i (0: none): its predecessor in the init order,
\* or, for a regular or ephemeral container, the last of the init order.
\* (A constant function: TLC computes it once.)
BeforeOf == [i \in Ctrs |->
    IF i \in InitOrder THEN (IF i - 1 \in InitOrder THEN i - 1 ELSE 0)
    ELSE IF InitOrder = {} THEN 0 ELSE CHOOSE j \in InitOrder : \A k \in InitOrder : k <= j]
Before(i) == BeforeOf[i]

Live(c, j) == c[j].state \in {"Created", "Running"}
\* Some container started (a created instance that never started does not count).
AnyRan(c) == \E j \in Ctrs : c[j].state \notin {"NotCreated", "Created"} \/ c[j].code # "None"

(* The spec and pod-level facts of container i, when the containers are  *)
(* c, the sandbox sb (ready: rd), termination tm and the phase ph.        *)
FactsOf(i, c, sb, rd, tm, ph) ==
    LET b == Before(i) IN
    [EmptyFacts EXCEPT
        !.kind = Kinds[i], !.policy = Policies[i], !.rule = Rules[i],
        !.sandbox = sb, !.sandboxReady = rd, !.terminating = tm,
        !.first = (b = 0),
        !.beforeKind = IF b = 0 THEN "Init" ELSE Kinds[b],
        !.beforeState = IF b = 0 THEN "NotCreated" ELSE c[b].state,
        !.beforeGen = IF b = 0 THEN 0 ELSE c[b].gen,
        !.beforeStarted = IF b = 0 THEN FALSE ELSE c[b].started,
        !.mainSeen = \E j \in Ctrs : Kinds[j] = "Regular" /\ c[j].state # "NotCreated",
        !.regularsStopped = \A j \in Ctrs : Kinds[j] = "Regular" => ~Live(c, j),
        !.laterSidecarsStopped = \A j \in Ctrs : (j > i /\ Kinds[j] = "Sidecar") => ~Live(c, j),
        !.phase = ph, !.podNever = PodNever, !.anyRan = AnyRan(c)]

Facts(i) == facts[i]

(***************************************************************************)
(* The pod's phase (kubelet: getPhase), from the containers after a step: *)
(* terminal phases are kept; a Never pod failed when its sandbox died     *)
(* after its containers ran; a pod failed when an init container failed  *)
(* and will not run again; it succeeded or failed when every regular     *)
(* container exited in the current sandbox and will not run again        *)
(* (sidecars do not count).                                               *)
(***************************************************************************)
Terminal(ph) == ph \in {"Succeeded", "Failed"}

PhaseOf(c, sb, rd, tm, ph) ==
    LET f(i) == FactsOf(i, c, sb, rd, tm, ph)
        done(i) == c[i].gen = sb /\ c[i].state \in {"ExitedSuccess", "ExitedFailure"} /\ ~MayRunAgain(c[i], f(i))
        regs == {i \in Ctrs : Kinds[i] = "Regular"}
    IN CASE Terminal(ph) -> ph
         [] ~rd /\ PodNever /\ AnyRan(c) /\ ~tm -> "Failed"
         [] \E i \in Ctrs : Kinds[i] = "Init" /\ c[i].state = "ExitedFailure" /\ done(i) -> "Failed"
         [] regs # {} /\ \A i \in regs : done(i) ->
                IF \A i \in regs : c[i].state = "ExitedSuccess" THEN "Succeeded" ELSE "Failed"
         [] \E i \in Ctrs : c[i].state = "Running" -> "Running"
         [] OTHER -> ph

(* The containers become c2; the phase follows; a terminal phase makes    *)
(* the pod terminate (the pod worker's SyncTerminatingPod).               *)
Settle(c2, sb2, rd2, tm2) ==
    LET ph2 == PhaseOf(c2, sb2, rd2, tm2, phase)
        tm3 == tm2 \/ Terminal(ph2)
    IN /\ ctr' = c2
       /\ sandbox' = sb2
       /\ ready' = rd2
       /\ phase' = ph2
       /\ terminating' = tm3
       /\ facts' = [i \in Ctrs |-> FactsOf(i, c2, sb2, rd2, tm3, ph2)]

(* Container i takes event ev with parameters e. *)
Fire(i, ev, e) ==
    LET s == CStep(ev, ctr[i], e)
    IN /\ s.row # ""
       /\ Settle([ctr EXCEPT ![i] = s.next], sandbox, ready, terminating)

(* The kubelet's decision ev for container i; Decide(i): any of them (the *)
(* rows let at most one decision be enabled for a container at a time).  *)
Decide(i, ev) == Fire(i, ev, Facts(i))
Decides(i) == \E ev \in DecisionEvents : Decide(i, ev)

(* The runtime reports that i's instance exited with code c. *)
Exits(i) == \E c \in ExitCodes[i] : Fire(i, "Exit", [Facts(i) EXCEPT !.code = c])
StartupOK(i) == Fire(i, "StartupOK", Facts(i))
(* Probes and spec changes of a running pod (the terminating pod worker   *)
(* no longer probes or replaces containers).                              *)
Inputs(i) ==
    /\ ~terminating
    /\ \/ Probes /\ Fire(i, "LivenessFail", Facts(i))
       \/ Probes /\ Fire(i, "StartupFail", Facts(i))
       \/ Probes /\ Fire(i, "RanLong", Facts(i))
       \/ SpecChanges /\ Fire(i, "SpecChange", Facts(i))

(* The sandbox dies with every instance in it. *)
SandboxDies ==
    /\ ready /\ sandbox < MaxSandbox /\ ~terminating
    /\ Settle([i \in Ctrs |-> CStep("SandboxDied", ctr[i], Facts(i)).next], sandbox, FALSE, terminating)

(* The kubelet creates the next sandbox (RecreateSandbox, from spec/). *)
CreateSandbox ==
    /\ ~ready /\ sandbox < MaxSandbox
    /\ RecreateSandbox(EmptyContainer, Facts(1))
    /\ Settle(ctr, sandbox + 1, TRUE, terminating)

(* The pod is deleted. *)
Terminate ==
    /\ Terminations /\ ~terminating
    /\ Settle(ctr, sandbox, ready, TRUE)

Init ==
    /\ ctr = [i \in Ctrs |-> EmptyContainer]
    /\ sandbox = 0
    /\ ready = TRUE
    /\ terminating = FALSE
    /\ phase = "Pending"
    /\ facts = [i \in Ctrs |-> FactsOf(i, ctr, sandbox, ready, terminating, phase)]

Next ==
    \/ \E i \in Ctrs :
        \/ Decides(i)
        \/ Exits(i)
        \/ StartupOK(i)
        \/ Inputs(i)
    \/ SandboxDies
    \/ CreateSandbox
    \/ Terminate

(***************************************************************************)
(* Fairness: the kubelet keeps taking its decisions; the runtime          *)
(* eventually ends every instance of an init, regular or ephemeral        *)
(* container (fair runtimes; a sidecar runs until it crashes or is        *)
(* killed); a container that keeps running again eventually passes its    *)
(* startup probe; a dead sandbox is replaced when the kubelet decides so. *)
(***************************************************************************)
Fairness ==
    /\ \A i \in Ctrs :
        /\ WF_vars(Decides(i))
        /\ Kinds[i] # "Sidecar" => WF_vars(Exits(i))
        /\ SF_vars(StartupOK(i))
    /\ WF_vars(CreateSandbox)

Spec == Init /\ [][Next]_vars /\ Fairness
=============================================================================
