------------------------- MODULE MCPodLifecycleMixed -------------------------
(***************************************************************************)
(* The state invariants on one static pod and one ordinary pod: starting   *)
(* without a slot, a pod killed before it started. No grace requests (the  *)
(* specs' 2 s only); one kill channel open per pod at a time; every kind   *)
(* of input.                                                               *)
(***************************************************************************)
EXTENDS PodLifecycleProperties

MCPods == {"p1", "p2"}
MCStaticPods == {"p1"}
MCGraceOverrides == {}
MCSpecGrace == 2
MCKillChannels == 1
MCRuntimePods == TRUE
MCTerminalPhases == TRUE
=============================================================================
