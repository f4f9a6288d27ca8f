------------------------------ MODULE MCContainerNever ------------------------------
(***************************************************************************)
(* A Never pod, its sidecar first: sidecar, init container, regular        *)
(* container, two sandbox generations. The regular container has a       *)
(* restartPolicyRule (Restart on the exit code Rule); no spec changes.    *)
(***************************************************************************)
EXTENDS ContainerLifecycleProperties

MCKinds == <<"Sidecar", "Init", "Regular">>
MCPolicies == <<"Always", "Never", "Never">>
MCRules == <<FALSE, FALSE, TRUE>>
MCPodNever == TRUE
MCExitCodes == <<{"Other"}, {"Zero", "Other"}, {"Zero", "Rule", "Other"}>>
MCMaxSandbox == 1
MCSpecChanges == FALSE
MCProbes == TRUE
MCTerminations == TRUE
=============================================================================
