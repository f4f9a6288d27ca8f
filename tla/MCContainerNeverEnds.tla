------------------------------ MODULE MCContainerNeverEnds ------------------------------
(***************************************************************************)
(* A Never pod without restartPolicyRules: init container, sidecar,       *)
(* regular container, two sandbox generations, no deletion: with fair    *)
(* runtimes it reaches a terminal phase.                                 *)
(***************************************************************************)
EXTENDS ContainerLifecycleProperties

MCKinds == <<"Init", "Sidecar", "Regular">>
MCPolicies == <<"Never", "Always", "Never">>
MCRules == <<FALSE, FALSE, FALSE>>
MCPodNever == TRUE
MCExitCodes == <<{"Zero", "Other"}, {"Other"}, {"Zero", "Other"}>>
MCMaxSandbox == 1
MCSpecChanges == FALSE
MCProbes == FALSE
MCTerminations == FALSE
=============================================================================
