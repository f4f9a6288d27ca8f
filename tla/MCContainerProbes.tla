------------------------------ MODULE MCContainerProbes ---------------------------------
(***************************************************************************)
(* An Always pod with a sidecar and a regular container in one sandbox:  *)
(* failures, startup and liveness probes, long runs that reset the      *)
(* back-off, image changes, deletion.                                   *)
(***************************************************************************)
EXTENDS ContainerLifecycleProperties

MCKinds == <<"Sidecar", "Regular">>
MCPolicies == <<"Always", "Always">>
MCRules == <<FALSE, FALSE>>
MCPodNever == FALSE
MCExitCodes == <<{"Other"}, {"Other"}>>
MCMaxSandbox == 0
MCSpecChanges == TRUE
MCProbes == TRUE
MCTerminations == TRUE
=============================================================================
