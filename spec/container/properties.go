package container

import "github.com/podlife/podlife/spec"

// Expressions over one container's record and its pod, for properties.
var (
	cin          = Schema.In
	running      = cin(Created, Running)
	begins       = spec.And(spec.Not(cin(Running)), spec.Next(cin(Running)))
	exited       = cin(ExitedSuccess, ExitedFailure)
	restarts     = spec.And(exited, spec.Next(cin(BackOff, Created)))
	ruleNamed    = func(name string) spec.Expr { return spec.Eq(spec.P(PPolicy), spec.E(RestartPolicyDomain, name)) }
	phaseIs      = func(name string) spec.Expr { return spec.Eq(spec.P(PPhase), spec.E(PodPhaseDomain, name)) }
	terminal     = spec.Or(phaseIs("Succeeded"), phaseIs("Failed"))
	gateOpen     = spec.Or(spec.P(PFirst), BeforeDone)
	sandboxMoves = spec.Lt(spec.V(Gen), spec.Next(spec.V(Gen)))
)

// Properties are the container lifecycle's properties, each
// stated for every container i of the pod: TLC checks them on
// tla/ContainerLifecycle.tla (tla/ContainerLifecycleProperties.tla is
// generated from them), and internal/mutants breaks the table or the
// model for each so that TLC reports it.
var Properties = []spec.Property{
	{Name: "CTypeOK", Kind: spec.Invariant, Ref: "C", Holds: spec.And(spec.InDomain(Gen), spec.InDomain(Started), spec.InDomain(Code), spec.InDomain(BackoffLevel), spec.InDomain(Replacing), spec.Le(spec.V(Gen), spec.P(PSandbox))),
		Doc: "every variable lies in its domain; no instance belongs to a sandbox after the current one"},
	{Name: "InitOneAtATime", Kind: spec.Invariant, Ref: "C1", Holds: spec.Implies(spec.And(kindIs("Init"), running, current), gateOpen),
		Doc: "an init container is created or runs only once the container before it in the init order is done in the current sandbox: one at a time, in order"},
	{Name: "InitInOrder", Kind: spec.StepProperty, Ref: "C1", Holds: spec.Implies(spec.And(initOrder, begins), gateOpen),
		Doc: "an init container or sidecar starts only after its predecessor completed (an init container) or passed its startup probe (a sidecar) in the current sandbox"},
	{Name: "RegularsAfterInit", Kind: spec.StepProperty, Ref: "C2", Holds: spec.Implies(spec.And(kindIs("Regular", "Ephemeral"), begins), gateOpen),
		Doc: "no regular or ephemeral container starts before the init phase of the current sandbox is complete"},
	{Name: "NothingOfThePreviousSandboxCounts", Kind: spec.StepProperty, Ref: "C5",
		Holds: spec.And(spec.Implies(begins, spec.And(current, spec.Next(current))), spec.Implies(sandboxMoves, spec.Next(spec.And(cin(NotCreated), spec.Not(spec.V(Started)), codeIs(Code, "None"))))),
		Doc:   "only instances of the current sandbox start; an instance of a previous sandbox becomes NotCreated, not started and with no exit code when the container moves to the new sandbox"},
	{Name: "NeverIsNeverRestarted", Kind: spec.StepProperty, Ref: "C3", Holds: spec.Implies(spec.And(ruleNamed("Never"), spec.Not(RuleMatches), restarts), spec.V(Replacing)),
		Doc: "a Never container is never restarted unless one of its restartPolicyRules matches (a spec change replaces it)"},
	{Name: "OnFailureOnlyAfterFailure", Kind: spec.StepProperty, Ref: "C3", Holds: spec.Implies(spec.And(ruleNamed("OnFailure"), restarts), spec.Or(spec.V(Replacing), spec.Not(codeIs(Code, "Zero")))),
		Doc: "an OnFailure container is restarted only after a failure"},
	{Name: "RulesAsWritten", Kind: spec.LeadsTo, Ref: "C3",
		From:  spec.And(cin(ExitedFailure), RuleMatches, current, spec.Not(spec.P(PTerminating))),
		Holds: spec.Or(cin(Running), spec.P(PTerminating), stale),
		Doc:   "a container whose restartPolicyRules match its exit code runs again, whatever its policy, unless the pod terminates or its sandbox changes"},
	{Name: "CrashedRegularRestarted", Kind: spec.LeadsTo, Ref: "C4",
		From:  spec.And(kindIs("Regular"), cin(ExitedFailure), current, spec.Not(ruleNamed("Never")), spec.Not(spec.P(PTerminating))),
		Holds: spec.Or(cin(Running), spec.P(PTerminating), stale),
		Doc:   "a crashed regular container is restarted under Always and OnFailure, also while a sidecar runs, unless the pod terminates or its sandbox changes"},
	{Name: "InitRerunsAfterSandboxChange", Kind: spec.LeadsTo, Ref: "C5",
		From:  spec.And(initOrder, stale, spec.Not(spec.P(PTerminating))),
		Holds: spec.Or(spec.And(current, cin(Running)), spec.P(PTerminating), terminal),
		Doc:   "after a sandbox change every init container and sidecar runs again in the new sandbox, unless the pod terminates"},
	{Name: "NoInstanceStuckInCreated", Kind: spec.LeadsTo, Ref: "C5",
		From:  spec.And(cin(Created), current, spec.Not(spec.P(PTerminating))),
		Holds: spec.Or(spec.Not(cin(Created)), spec.P(PTerminating), stale),
		Doc:   "a created instance of the current sandbox is started, unless the pod terminates or its sandbox changes"},
	{Name: "SidecarsStopLast", Kind: spec.StepProperty, Ref: "C6",
		Holds: spec.Implies(spec.And(spec.P(PTerminating), kindIs("Sidecar"), running, spec.Next(spec.And(cin(ExitedFailure), codeIs(Code, "Killed")))), spec.And(spec.P(PRegularsStopped), spec.P(PLaterSidecarsStopped))),
		Doc:   "while the pod terminates, the kubelet kills a sidecar only after every regular container and every later sidecar stopped: sidecars stop after the regular containers, in reverse order"},
	{Name: "BackoffGrowsToCap", Kind: spec.StepProperty, Ref: "C7",
		Holds: spec.And(
			spec.Implies(spec.And(spec.Not(cin(BackOff)), spec.Next(cin(BackOff))), spec.Eq(spec.Next(spec.V(BackoffLevel)), spec.If(spec.Lt(spec.V(BackoffLevel), spec.N(BackoffCap)), NextBackoff, spec.N(BackoffCap)))),
			spec.Implies(spec.Lt(spec.Next(spec.V(BackoffLevel)), spec.V(BackoffLevel)), spec.And(cin(Running), spec.Next(cin(Running)), spec.Eq(spec.Next(spec.V(BackoffLevel)), spec.N(0))))),
		Doc: "each restart waits one back-off level longer, up to the cap; the back-off resets to 0 only while an instance runs long enough"},
	{Name: "PhaseTerminalOnlyWhenDone", Kind: spec.Invariant, Ref: "C8", Holds: spec.Implies(terminal, spec.And(spec.P(PTerminating), spec.Or(spec.Not(MayRunAgain), kindIs("Sidecar"), spec.Not(spec.P(PSandboxReady))))),
		Doc: "the pod's phase is terminal only when no init, regular or ephemeral container can run again (sidecars do not count, nor anything of a sandbox that is gone), and then the pod terminates"},
	{Name: "PhaseNeverLeft", Kind: spec.StepProperty, Ref: "C8", Holds: spec.Implies(terminal, spec.Eq(spec.Next(spec.P(PPhase)), spec.P(PPhase))),
		Doc: "a terminal phase is never left"},
	{Name: "PodEndsUnderNever", Kind: spec.LeadsTo, Ref: "C9",
		From:  spec.And(kindIs("Regular"), ruleNamed("Never"), spec.Not(spec.P(PRule))),
		Holds: terminal,
		Doc:   "with fair runtimes, a pod whose regular containers all end under Never (no restartPolicyRules) reaches a terminal phase"},
	{Name: "TerminationStopsEveryContainer", Kind: spec.LeadsTo, Ref: "C9",
		From:  spec.And(spec.P(PTerminating), running),
		Holds: spec.Not(running),
		Doc:   "once the pod terminates, every created or running instance stops"},
}

// PropertyNamed returns the container property called name.
func PropertyNamed(name string) (spec.Property, bool) {
	for _, p := range Properties {
		if p.Name == name {
			return p, true
		}
	}
	return spec.Property{}, false
}
