---------------------------- MODULE MCPodLifecycle ----------------------------
(***************************************************************************)
(* Model-checking bounds for PodLifecycle: two static pods that share one  *)
(* full name (so the slot, the waiting order and UID reuse all matter),    *)
(* kills and deletions that request 1 second, pods whose spec asks for 2.  *)
(* Grace values reachable: unset, 1, 2.                                    *)
(***************************************************************************)
EXTENDS PodLifecycleProperties

MCPods == {"p1", "p2"}
MCStaticPods == {"p1", "p2"}
MCGraceOverrides == {1}
MCSpecGrace == 2
MCKillChannels == 1
=============================================================================
