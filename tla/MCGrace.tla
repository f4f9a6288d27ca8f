------------------------------- MODULE MCGrace --------------------------------
(***************************************************************************)
(* Grace periods that can fail: one ordinary pod, kills and deletions      *)
(* asking for 0, 1 or 3 s against the spec's 2 s (shorter and longer than  *)
(* it, and 0, which the engine takes as 1), so that taking the larger of   *)
(* two requests, or growing a grace period, is a reachable mistake; up to  *)
(* two kill channels open at a time; every kind of input.                  *)
(***************************************************************************)
EXTENDS PodLifecycleProperties

MCPods == {"p1"}
MCStaticPods == {}
MCGraceOverrides == {0, 1, 3}
MCSpecGrace == 2
MCKillChannels == 2
MCRuntimePods == TRUE
MCTerminalPhases == TRUE
=============================================================================
