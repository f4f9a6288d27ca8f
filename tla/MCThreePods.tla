----------------------------- MODULE MCThreePods ------------------------------
(***************************************************************************)
(* Three static pods that share one full name: one holds the name while    *)
(* two wait in line behind it, so the waiting order has two entries (a pod *)
(* leaves it from the middle, the head changes while others wait). Every   *)
(* update, deletion and SyncKnownPods input, but no kills, no runtime-only *)
(* pods and no terminal phases (kills and those inputs are covered on two  *)
(* pods by the other configs): the bounds that keep three pods in reach.   *)
(* Not run by CI (see tla/README.md): the explorer and TLC take minutes to *)
(* an hour here.                                                           *)
(***************************************************************************)
EXTENDS PodLifecycleProperties

MCPods == {"p1", "p2", "p3"}
MCStaticPods == {"p1", "p2", "p3"}
MCGraceOverrides == {}
MCSpecGrace == 2
MCKillChannels == 0
MCRuntimePods == FALSE
MCTerminalPhases == FALSE
=============================================================================
