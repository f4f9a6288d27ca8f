package mutants

import (
	"github.com/podlife/podlife/spec"
	"github.com/podlife/podlife/spec/container"
)

// ContainerMutant is one broken variant of the container lifecycle: a
// broken row or named operator of container.Table (rendered by the
// generator, so TLC checks the broken table), or an edit of the
// hand-written tla/ContainerLifecycle.tla. TLC must report Property on
// tla/<Config>.cfg (gen's TestContainerMutantsInTLC).
type ContainerMutant struct {
	Property string
	Config   string
	What     string
	// Bug names the kubelet issue the mutant reproduces, if any.
	Bug       string
	Table     func(rows []spec.Row) []spec.Row
	Operators func(ops []container.Operator) []container.Operator
	// TLA edits the hand-written model; Model makes the same edit in its
	// Go twin, explore/container's model (its TestModelMutants).
	TLA, Model []Edit
}

const (
	containerModelPath = "tla/ContainerLifecycle.tla"
	containerGoPath    = "explore/container/model.go"
)

// guard replaces the guard of row id.
func guard(id string, g spec.Expr) func([]spec.Row) []spec.Row {
	return row(id, func(r *spec.Row) { r.Guard = g })
}

// operator replaces the named operator of the container table.
func operator(name string, e spec.Expr) func([]container.Operator) []container.Operator {
	return func(ops []container.Operator) []container.Operator {
		out := append([]container.Operator(nil), ops...)
		for i := range out {
			if out[i].Name == name {
				out[i].Expr = e
				return out
			}
		}
		panic("mutants: no operator " + name)
	}
}

// Expressions of the container table the mutants rebuild.
var (
	pEq  = func(p *spec.Param, d *spec.Domain, v string) spec.Expr { return spec.Eq(spec.P(p), spec.E(d, v)) }
	kind = func(k string) spec.Expr { return pEq(container.PKind, container.KindDomain, k) }
	// mayAct is the rows' "current sandbox, ready, not terminating".
	mayAct = spec.And(spec.Eq(spec.V(container.Gen), spec.P(container.PSandbox)), spec.P(container.PSandboxReady), spec.Not(spec.P(container.PTerminating)))
	// initDone and sidecarStarted are the two halves of container.BeforeDone
	// without its sandbox check.
	initDone       = spec.And(pEq(container.PBeforeKind, container.KindDomain, "Init"), pEq(container.PBeforeState, container.StateDomain, "ExitedSuccess"))
	sidecarStarted = spec.And(pEq(container.PBeforeKind, container.KindDomain, "Sidecar"), spec.P(container.PBeforeStarted))
	sameSandbox    = spec.Eq(spec.P(container.PBeforeGen), spec.P(container.PSandbox))
	restartGuard   = spec.And(mayAct, spec.Not(spec.V(container.Replacing)), container.PolicyRestarts)
	// onFailureForNever is container.PolicyRestarts with Never read as OnFailure.
	onFailureForNever = spec.And(spec.Not(kind("Ephemeral")), spec.Or(container.RuleMatches,
		pEq(container.PPolicy, container.RestartPolicyDomain, "Always"), spec.Not(spec.Eq(spec.V(container.Code), spec.E(container.ExitCodeDomain, "Zero")))))
	purgeToNew = func(r *spec.Row) {
		r.Set = []spec.Assign{{Var: container.Gen, Value: spec.P(container.PSandbox)}}
	}
)

// Container lists the container mutants: at least one per property of
// container.Properties, and one per kubelet bug of issue 29.
var Container = []ContainerMutant{
	{Property: "CTypeOK", Config: "MCContainerNeverEnds", What: "a purge moves the instance to sandbox 2, after the current one",
		Table: row("NotCreatedPurge", func(r *spec.Row) { set(r, container.Gen, spec.N(2)) })},
	{Property: "InitOneAtATime", Config: "MCContainerNever", What: "an init container is created without waiting for the sidecar before it",
		Table: guard("NotCreatedStart", mayAct)},
	{Property: "InitInOrder", Config: "MCContainerNeverEnds", What: "a sidecar starts without waiting for the init container before it",
		Table: guard("NotCreatedStart", spec.And(mayAct, spec.Or(container.MayStart, kind("Sidecar"))))},
	{Property: "RegularsAfterInit", Config: "MCContainerNeverEnds", What: "a regular container starts without waiting for the init phase",
		Table: guard("NotCreatedStart", spec.And(mayAct, spec.Or(container.MayStart, kind("Regular"))))},
	{Property: "NeverIsNeverRestarted", Config: "MCContainerNeverEnds", What: "Never is taken for OnFailure: a failed Never container is restarted (by the restart row and the phase alike)",
		Table:     guard("ExitedFailureRestart", spec.And(mayAct, spec.Not(spec.V(container.Replacing)), onFailureForNever)),
		Operators: operator("MayRunAgain", spec.And(spec.Eq(spec.V(container.Gen), spec.P(container.PSandbox)), spec.Or(container.Schema.In(container.BackOff, container.Created), spec.And(container.Schema.In(container.ExitedSuccess, container.ExitedFailure), spec.Or(spec.V(container.Replacing), onFailureForNever)))))},
	{Property: "OnFailureOnlyAfterFailure", Config: "MCContainerSandbox", What: "OnFailure restarts an init container that exited with 0",
		Table: guard("ExitedSuccessRestart", spec.And(mayAct, spec.Not(pEq(container.PPolicy, container.RestartPolicyDomain, "Never"))))},
	{Property: "RulesAsWritten", Config: "MCContainerNever", What: "restartPolicyRules are ignored: only the policy restarts",
		Table: guard("ExitedFailureRestart", spec.And(mayAct, spec.Not(spec.V(container.Replacing)), spec.Not(pEq(container.PPolicy, container.RestartPolicyDomain, "Never"))))},
	{Property: "SidecarsStopLast", Config: "MCContainerProbes", What: "a terminating pod kills its sidecar as soon as its regular containers",
		Table: guard("RunningStop", spec.And(spec.Eq(spec.V(container.Gen), spec.P(container.PSandbox)), spec.P(container.PTerminating)))},
	{Property: "SidecarsStopLast", Config: "MCContainerSidecars", What: "a terminating pod stops its sidecars in their own order, not in reverse",
		Table: guard("RunningStop", spec.And(spec.Eq(spec.V(container.Gen), spec.P(container.PSandbox)), spec.P(container.PTerminating),
			spec.Or(spec.Not(kind("Sidecar")), spec.P(container.PRegularsStopped))))},
	{Property: "BackoffGrowsToCap", Config: "MCContainerProbes", What: "the first restart already waits the capped back-off",
		Table: row("ExitedFailureRestart", func(r *spec.Row) { set(r, container.BackoffLevel, spec.N(container.BackoffCap)) })},
	{Property: "PhaseTerminalOnlyWhenDone", Config: "MCContainerProbes", What: "the phase counts an exited regular container as done even if it will restart",
		TLA: []Edit{{Path: containerModelPath,
			Old: `done(i) == c[i].gen = sb /\ c[i].state \in {"ExitedSuccess", "ExitedFailure"} /\ ~MayRunAgain(c[i], f(i))`,
			New: `done(i) == c[i].gen = sb /\ c[i].state \in {"ExitedSuccess", "ExitedFailure"}`}},
		Model: []Edit{{Path: containerGoPath,
			Old: "(c.State == fc.ExitedSuccess || c.State == fc.ExitedFailure) &&\n\t\t\t!m.mayRunAgain(c.State, c.Vars, m.factsOf(i, s))",
			New: "(c.State == fc.ExitedSuccess || c.State == fc.ExitedFailure)"}}},
	{Property: "PhaseNeverLeft", Config: "MCContainerNeverEnds", What: "a succeeded pod is reported Failed once the kubelet killed its sidecar",
		TLA: []Edit{{Path: containerModelPath,
			Old: `CASE Terminal(ph) -> ph`,
			New: `CASE Terminal(ph) /\ \A i \in Ctrs : c[i].code # "Killed" -> ph
         [] Terminal(ph) -> "Failed"`}},
		Model: []Edit{{Path: containerGoPath,
			Old: "if terminal(s.phase) {\n\t\treturn s.phase\n\t}",
			New: "if terminal(s.phase) {\n\t\tfor i := range m.n {\n\t\t\tif s.ctr[i].Vars.Code == fc.ExitCodeKilled {\n\t\t\t\treturn fc.PodPhaseFailed\n\t\t\t}\n\t\t}\n\t\treturn s.phase\n\t}"}}},
	{Property: "TerminationStopsEveryContainer", Config: "MCContainerProbes", What: "a terminating pod never kills its sidecars",
		Table: guard("RunningStop", spec.And(spec.Eq(spec.V(container.Gen), spec.P(container.PSandbox)), spec.P(container.PTerminating), spec.Not(kind("Sidecar"))))},

	// The kubelet's bugs of issue 29, each as the row or rule that had it.
	{Property: "CrashedRegularRestarted", Config: "MCContainerProbes", Bug: "kubernetes/kubernetes#136969, #137146",
		What:  "with a sidecar running, podHasInitialized stays false and a crashed regular container is never restarted",
		Table: guard("ExitedFailureRestart", spec.And(restartGuard, spec.Not(spec.And(kind("Regular"), pEq(container.PBeforeKind, container.KindDomain, "Sidecar"), pEq(container.PBeforeState, container.StateDomain, "Running")))))},
	{Property: "RegularsAfterInit", Config: "MCContainerSandbox", Bug: "kubernetes/kubernetes#137710",
		What:  "a residual exited init container of the previous sandbox counts as done: the regular container starts and the inits are skipped",
		Table: guard("NotCreatedStart", spec.And(mayAct, spec.Or(spec.P(container.PFirst), initDone, spec.And(sameSandbox, sidecarStarted))))},
	{Property: "NothingOfThePreviousSandboxCounts", Config: "MCContainerSandbox", Bug: "kubernetes/kubernetes#140309, #140364",
		What:  "a created-but-never-started regular container of the previous sandbox is taken over in the new one instead of removed",
		Table: row("CreatedPurge", func(r *spec.Row) { r.To = container.Created; purgeToNew(r) })},
	{Property: "RegularsAfterInit", Config: "MCContainerLifecycle", Bug: "kubernetes/kubernetes#120247",
		What:  "after a sandbox change the sidecar's start in the previous sandbox counts: the regular container starts before the sidecar",
		Table: guard("NotCreatedStart", spec.And(mayAct, spec.Or(spec.P(container.PFirst), spec.And(sameSandbox, initDone), sidecarStarted)))},
	{Property: "NoInstanceStuckInCreated", Config: "MCContainerSandbox", Bug: "kubernetes/kubernetes#126543",
		What:  "an init container created again after a failure is never started: it stays in Created",
		Table: guard("CreatedBegin", spec.And(mayAct, spec.Or(spec.Not(kind("Init")), spec.Eq(spec.V(container.BackoffLevel), spec.N(0)))))},
	{Property: "InitRerunsAfterSandboxChange", Config: "MCContainerSandbox", Bug: "kubernetes/kubernetes#49505",
		What:  "a new sandbox keeps the init container that completed in the old one as done: it is not run again",
		Table: row("ExitedSuccessPurge", func(r *spec.Row) { r.To = container.ExitedSuccess; purgeToNew(r) })},
	{Property: "PodEndsUnderNever", Config: "MCContainerNeverEnds", Bug: "kubernetes/kubernetes#79398",
		What:      "a Never pod whose sandbox died before any container ran never gets a new one: it stays Pending",
		Operators: operator("RecreateSandbox", spec.And(spec.Not(spec.P(container.PTerminating)), spec.Not(spec.P(container.PPodNever))))},
}
