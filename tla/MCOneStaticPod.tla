--------------------------- MODULE MCOneStaticPod ----------------------------
(***************************************************************************)
(* Every property on one static pod: grace requests of 1 s shrink the      *)
(* spec's 2 s; up to two kill channels open at a time; every kind of       *)
(* input.                                                                  *)
(***************************************************************************)
EXTENDS PodLifecycleProperties

MCPods == {"p1"}
MCStaticPods == {"p1"}
MCGraceOverrides == {1}
MCSpecGrace == 2
MCKillChannels == 2
MCRuntimePods == TRUE
MCTerminalPhases == TRUE
=============================================================================
