--------------------------- MODULE MCPodLifecycle ----------------------------
(***************************************************************************)
(* The state invariants and the step properties on two static pods that   *)
(* share one full name (the slot, the waiting order and UID reuse all      *)
(* matter): kills and deletions request 1 s or nothing, specs ask for 2 s  *)
(* (grace values unset, 1, 2); one kill channel open per pod at a time;    *)
(* every kind of input.                                                    *)
(***************************************************************************)
EXTENDS PodLifecycleProperties

MCPods == {"p1", "p2"}
MCStaticPods == {"p1", "p2"}
MCGraceOverrides == {1}
MCSpecGrace == 2
MCKillChannels == 1
MCRuntimePods == TRUE
MCTerminalPhases == TRUE
=============================================================================
