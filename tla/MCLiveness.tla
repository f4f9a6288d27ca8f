----------------------------- MODULE MCLiveness ------------------------------
(***************************************************************************)
(* The liveness properties on two static pods that share one full name     *)
(* (one waits while the other holds the name), without runtime-only pods   *)
(* and terminal phases, which TLC's liveness check could not fit; one kill *)
(* channel open per pod at a time.                                         *)
(***************************************************************************)
EXTENDS PodLifecycleProperties

MCPods == {"p1", "p2"}
MCStaticPods == {"p1", "p2"}
MCGraceOverrides == {}
MCSpecGrace == 2
MCKillChannels == 1
MCRuntimePods == FALSE
MCTerminalPhases == FALSE
=============================================================================
