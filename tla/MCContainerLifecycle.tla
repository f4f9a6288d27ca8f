------------------------------ MODULE MCContainerLifecycle ------------------------------
(***************************************************************************)
(* An Always pod with one init container, one sidecar and one regular    *)
(* container, two sandbox generations: exits with 0 and with a failure,  *)
(* the sandbox's death, deletion (probes and spec changes: see          *)
(* MCContainerProbes).                                                   *)
(***************************************************************************)
EXTENDS ContainerLifecycleProperties

MCKinds == <<"Init", "Sidecar", "Regular">>
MCPolicies == <<"OnFailure", "Always", "Always">>
MCRules == <<FALSE, FALSE, FALSE>>
MCPodNever == FALSE
MCExitCodes == <<{"Zero", "Other"}, {"Other"}, {"Other"}>>
MCMaxSandbox == 1
MCSpecChanges == FALSE
MCProbes == FALSE
MCTerminations == TRUE
=============================================================================
