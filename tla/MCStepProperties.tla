-------------------------- MODULE MCStepProperties ---------------------------
(***************************************************************************)
(* The step properties (and the invariants) on two static pods that share  *)
(* one full name, without grace requests; one kill channel open per pod    *)
(* at a time; every kind of input.                                         *)
(***************************************************************************)
EXTENDS PodLifecycleProperties

MCPods == {"p1", "p2"}
MCStaticPods == {"p1", "p2"}
MCGraceOverrides == {}
MCSpecGrace == 2
MCKillChannels == 1
MCRuntimePods == TRUE
MCTerminalPhases == TRUE
=============================================================================
