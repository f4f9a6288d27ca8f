------------------------------ MODULE MCContainerSidecars --------------------------------
(***************************************************************************)
(* An Always pod with two sidecars and a regular container in one        *)
(* sandbox: the sidecars must stop after the regular container, the      *)
(* second before the first. Crashes and deletion.                        *)
(***************************************************************************)
EXTENDS ContainerLifecycleProperties

MCKinds == <<"Sidecar", "Sidecar", "Regular">>
MCPolicies == <<"Always", "Always", "Always">>
MCRules == <<FALSE, FALSE, FALSE>>
MCPodNever == FALSE
MCExitCodes == <<{"Other"}, {"Other"}, {"Other"}>>
MCMaxSandbox == 0
MCSpecChanges == FALSE
MCProbes == FALSE
MCTerminations == TRUE
=============================================================================
