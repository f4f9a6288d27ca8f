package spec

// Expressions over one container's record and its pod, for properties.
var (
	cin          = ContainerSchema.In
	running      = cin(Created, CRunning)
	begins       = And(Not(cin(CRunning)), Next(cin(CRunning)))
	exited       = cin(ExitedSuccess, ExitedFailure)
	restarts     = And(exited, Next(cin(BackOff, Created)))
	ruleNamed    = func(name string) Expr { return Eq(P(PPolicy), E(RestartPolicyDomain, name)) }
	phaseIs      = func(name string) Expr { return Eq(P(PPhase), E(PodPhaseDomain, name)) }
	terminal     = Or(phaseIs("Succeeded"), phaseIs("Failed"))
	gateOpen     = Or(P(PFirst), BeforeDone)
	sandboxMoves = Lt(V(CGen), Next(V(CGen)))
)

// ContainerProperties are the container lifecycle's properties, each
// stated for every container i of the pod: TLC checks them on
// tla/ContainerLifecycle.tla (tla/ContainerLifecycleProperties.tla is
// generated from them), and internal/mutants breaks the table or the
// model for each so that TLC reports it.
var ContainerProperties = []Property{
	{Name: "CTypeOK", Kind: Invariant, Ref: "C", Holds: And(InDomain(CGen), InDomain(CStarted), InDomain(CCode), InDomain(CBackoff), InDomain(CReplacing), Le(V(CGen), P(PSandbox))),
		Doc: "every variable lies in its domain; no instance belongs to a sandbox after the current one"},
	{Name: "InitOneAtATime", Kind: Invariant, Ref: "C1", Holds: Implies(And(kindIs("Init"), running, current), gateOpen),
		Doc: "an init container is created or runs only once the container before it in the init order is done in the current sandbox: one at a time, in order"},
	{Name: "InitInOrder", Kind: StepProperty, Ref: "C1", Holds: Implies(And(initOrder, begins), gateOpen),
		Doc: "an init container or sidecar starts only after its predecessor completed (an init container) or passed its startup probe (a sidecar) in the current sandbox"},
	{Name: "RegularsAfterInit", Kind: StepProperty, Ref: "C2", Holds: Implies(And(kindIs("Regular", "Ephemeral"), begins), gateOpen),
		Doc: "no regular or ephemeral container starts before the init phase of the current sandbox is complete"},
	{Name: "NothingOfThePreviousSandboxCounts", Kind: StepProperty, Ref: "C5",
		Holds: And(Implies(begins, And(current, Next(current))), Implies(sandboxMoves, Next(And(cin(NotCreated), Not(V(CStarted)), codeIs(CCode, "None"))))),
		Doc:   "only instances of the current sandbox start; an instance of a previous sandbox becomes NotCreated, not started and with no exit code when the container moves to the new sandbox"},
	{Name: "NeverIsNeverRestarted", Kind: StepProperty, Ref: "C3", Holds: Implies(And(ruleNamed("Never"), Not(RuleMatches), restarts), V(CReplacing)),
		Doc: "a Never container is never restarted unless one of its restartPolicyRules matches (a spec change replaces it)"},
	{Name: "OnFailureOnlyAfterFailure", Kind: StepProperty, Ref: "C3", Holds: Implies(And(ruleNamed("OnFailure"), restarts), Or(V(CReplacing), Not(codeIs(CCode, "Zero")))),
		Doc: "an OnFailure container is restarted only after a failure"},
	{Name: "RulesAsWritten", Kind: LeadsTo, Ref: "C3",
		From:  And(cin(ExitedFailure), RuleMatches, current, Not(P(PTerminating))),
		Holds: Or(cin(CRunning), P(PTerminating), stale),
		Doc:   "a container whose restartPolicyRules match its exit code runs again, whatever its policy, unless the pod terminates or its sandbox changes"},
	{Name: "CrashedRegularRestarted", Kind: LeadsTo, Ref: "C4",
		From:  And(kindIs("Regular"), cin(ExitedFailure), current, Not(ruleNamed("Never")), Not(P(PTerminating))),
		Holds: Or(cin(CRunning), P(PTerminating), stale),
		Doc:   "a crashed regular container is restarted under Always and OnFailure, also while a sidecar runs, unless the pod terminates or its sandbox changes"},
	{Name: "InitRerunsAfterSandboxChange", Kind: LeadsTo, Ref: "C5",
		From:  And(initOrder, stale, Not(P(PTerminating))),
		Holds: Or(And(current, cin(CRunning)), P(PTerminating), terminal),
		Doc:   "after a sandbox change every init container and sidecar runs again in the new sandbox, unless the pod terminates"},
	{Name: "NoInstanceStuckInCreated", Kind: LeadsTo, Ref: "C5",
		From:  And(cin(Created), current, Not(P(PTerminating))),
		Holds: Or(Not(cin(Created)), P(PTerminating), stale),
		Doc:   "a created instance of the current sandbox is started, unless the pod terminates or its sandbox changes"},
	{Name: "SidecarsStopLast", Kind: StepProperty, Ref: "C6",
		Holds: Implies(And(P(PTerminating), kindIs("Sidecar"), running, Next(And(cin(ExitedFailure), codeIs(CCode, "Killed")))), And(P(PRegularsStopped), P(PLaterSidecarsStopped))),
		Doc:   "while the pod terminates, the kubelet kills a sidecar only after every regular container and every later sidecar stopped: sidecars stop after the regular containers, in reverse order"},
	{Name: "BackoffGrowsToCap", Kind: StepProperty, Ref: "C7",
		Holds: And(
			Implies(And(Not(cin(BackOff)), Next(cin(BackOff))), Eq(Next(V(CBackoff)), If(Lt(V(CBackoff), N(BackoffCap)), NextBackoff, N(BackoffCap)))),
			Implies(Lt(Next(V(CBackoff)), V(CBackoff)), And(cin(CRunning), Next(cin(CRunning)), Eq(Next(V(CBackoff)), N(0))))),
		Doc: "each restart waits one back-off level longer, up to the cap; the back-off resets to 0 only while an instance runs long enough"},
	{Name: "PhaseTerminalOnlyWhenDone", Kind: Invariant, Ref: "C8", Holds: Implies(terminal, And(P(PTerminating), Or(Not(MayRunAgain), kindIs("Sidecar"), Not(P(PSandboxReady))))),
		Doc: "the pod's phase is terminal only when no init, regular or ephemeral container can run again (sidecars do not count, nor anything of a sandbox that is gone), and then the pod terminates"},
	{Name: "PhaseNeverLeft", Kind: StepProperty, Ref: "C8", Holds: Implies(terminal, Eq(Next(P(PPhase)), P(PPhase))),
		Doc: "a terminal phase is never left"},
	{Name: "PodEndsUnderNever", Kind: LeadsTo, Ref: "C9",
		From:  And(kindIs("Regular"), ruleNamed("Never"), Not(P(PRule))),
		Holds: terminal,
		Doc:   "with fair runtimes, a pod whose regular containers all end under Never (no restartPolicyRules) reaches a terminal phase"},
	{Name: "TerminationStopsEveryContainer", Kind: LeadsTo, Ref: "C9",
		From:  And(P(PTerminating), running),
		Holds: Not(running),
		Doc:   "once the pod terminates, every created or running instance stops"},
}

// ContainerPropertyNamed returns the container property called name.
func ContainerPropertyNamed(name string) (Property, bool) {
	for _, p := range ContainerProperties {
		if p.Name == name {
			return p, true
		}
	}
	return Property{}, false
}
