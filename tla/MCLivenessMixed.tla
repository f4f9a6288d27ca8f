--------------------------- MODULE MCLivenessMixed ---------------------------
(***************************************************************************)
(* The liveness properties on one static pod and one ordinary pod, without *)
(* runtime-only pods and terminal phases (as MCLiveness); one kill channel *)
(* open per pod at a time.                                                 *)
(***************************************************************************)
EXTENDS PodLifecycleProperties

MCPods == {"p1", "p2"}
MCStaticPods == {"p1"}
MCGraceOverrides == {}
MCSpecGrace == 2
MCKillChannels == 1
MCRuntimePods == FALSE
MCTerminalPhases == FALSE
=============================================================================
