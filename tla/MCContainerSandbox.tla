------------------------------ MODULE MCContainerSandbox --------------------------------
(***************************************************************************)
(* An Always pod with one init container and one regular container, two *)
(* sandbox generations: the sandbox dies at any point, the init          *)
(* container fails or succeeds, the regular container crashes; deletion. *)
(***************************************************************************)
EXTENDS ContainerLifecycleProperties

MCKinds == <<"Init", "Regular">>
MCPolicies == <<"OnFailure", "Always">>
MCRules == <<FALSE, FALSE>>
MCPodNever == FALSE
MCExitCodes == <<{"Zero", "Other"}, {"Other"}>>
MCMaxSandbox == 1
MCSpecChanges == FALSE
MCProbes == FALSE
MCTerminations == TRUE
=============================================================================
