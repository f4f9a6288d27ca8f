------------------------- MODULE MCPodLifecycleMixed -------------------------
(***************************************************************************)
(* Model-checking bounds for PodLifecycle with one static pod and one      *)
(* ordinary pod: the non-static paths (start without a slot, a pod killed  *)
(* before it started still runs SyncTerminatingPod) and DesiredPodsStart.  *)
(***************************************************************************)
EXTENDS PodLifecycleProperties

MCPods == {"p1", "p2"}
MCStaticPods == {"p1"}
MCGraceOverrides == {1}
MCSpecGrace == 2
MCKillChannels == 1
=============================================================================
