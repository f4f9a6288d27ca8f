package container

import "github.com/podlife/podlife/spec"

// Table is the container lifecycle: every transition of one
// container's record within a pod. It is built once; callers must not
// modify it.
var Table = buildTable()

// Guards of the container table, named after what they mean. They are
// variables so that properties and mutants can name them.
var (
	kindIs = func(kinds ...string) spec.Expr {
		var es []spec.Expr
		for _, k := range kinds {
			es = append(es, spec.Eq(spec.P(PKind), spec.E(KindDomain, k)))
		}
		return spec.Or(es...)
	}
	codeIs    = func(v *spec.Var, c string) spec.Expr { return spec.Eq(spec.V(v), spec.E(ExitCodeDomain, c)) }
	current   = spec.Eq(spec.V(Gen), spec.P(PSandbox))
	stale     = spec.Lt(spec.V(Gen), spec.P(PSandbox))
	mayAct    = spec.And(current, spec.P(PSandboxReady), spec.Not(spec.P(PTerminating)))
	initOrder = kindIs("Init", "Sidecar")

	// BeforeDone: the container that gates this one is done in the
	// current sandbox: an init container exited with 0, a sidecar passed
	// its startup probe. Nothing of a previous sandbox counts.
	BeforeDone = spec.And(spec.Eq(spec.P(PBeforeGen), spec.P(PSandbox)), spec.Or(
		spec.And(spec.Eq(spec.P(PBeforeKind), spec.E(KindDomain, "Init")), spec.Eq(spec.P(PBeforeState), spec.E(StateDomain, "ExitedSuccess"))),
		spec.And(spec.Eq(spec.P(PBeforeKind), spec.E(KindDomain, "Sidecar")), spec.P(PBeforeStarted))))
	// MayStart: the container's gate is open.
	MayStart = spec.Or(spec.P(PFirst), BeforeDone)

	// RuleMatches: one of the container's restartPolicyRules restarts it on
	// its last exit code (rules are checked before the policy).
	RuleMatches = spec.And(spec.P(PRule), codeIs(Code, "Rule"))
	// PolicyRestarts: the restart policy, with restartPolicyRules, restarts
	// the container after its last exit. Ephemeral containers never restart.
	PolicyRestarts = spec.And(spec.Not(kindIs("Ephemeral")), spec.Or(RuleMatches,
		spec.Eq(spec.P(PPolicy), spec.E(RestartPolicyDomain, "Always")),
		spec.And(spec.Eq(spec.P(PPolicy), spec.E(RestartPolicyDomain, "OnFailure")), spec.Not(codeIs(Code, "Zero")))))
	// NextBackoff is the back-off level after one more restart: one
	// higher, up to the cap.
	NextBackoff = nextLevel(0)
	// StopInOrder: regular, init and ephemeral containers stop at once; a
	// sidecar only after every regular container and every later sidecar.
	StopInOrder = spec.Or(spec.Not(kindIs("Sidecar")), spec.And(spec.P(PRegularsStopped), spec.P(PLaterSidecarsStopped)))
	// MayRunAgain: the container's instance of the current sandbox will
	// run again unless the pod terminates: it waits in back-off, is to be
	// restarted or replaced, or is created and not started.
	MayRunAgain = spec.And(current, spec.Or(Schema.In(BackOff, Created),
		spec.And(Schema.In(ExitedSuccess, ExitedFailure), spec.Or(spec.V(Replacing), PolicyRestarts))))
)

// nextLevel is level+1 capped at BackoffCap, as the expression language
// has no addition: if Backoff = l then l+1 else (the same for l+1).
func nextLevel(l int) spec.Expr {
	if l >= BackoffCap-1 {
		return spec.N(BackoffCap)
	}
	return spec.If(spec.Eq(spec.V(BackoffLevel), spec.N(l)), spec.N(l+1), nextLevel(l+1))
}

type cbuilder struct{ rows []spec.Row }

func (b *cbuilder) add(from spec.State, ev spec.Event, tag string, guard spec.Expr, to spec.State, eff spec.Effect, doc string, sets ...spec.Assign) {
	b.rows = append(b.rows, spec.Row{
		ID: stateNames[from] + eventInfo[ev].Name + tag, Ref: "C", From: from, Event: ev,
		Guard: guard, To: to, Set: sets, Effects: eff, Doc: doc,
	})
}

func (b *cbuilder) ignore(from spec.State, ev spec.Event, guard spec.Expr, doc string) {
	b.add(from, ev, "Ignored", guard, from, 0, doc)
}

var (
	killed  = spec.SetEnum(Code, "Killed")
	allCtrs = []spec.State{NotCreated, Created, Running, ExitedSuccess, ExitedFailure, BackOff}
)

func buildTable() []spec.Row {
	b := &cbuilder{}
	b.add(NotCreated, Start, "", spec.And(mayAct, MayStart), Created, CreateInstance,
		"the container's gate is open in the current sandbox: create its instance")
	b.add(Created, Begin, "", mayAct, Running, StartInstance,
		"start the created instance")
	for _, s := range []spec.State{ExitedSuccess, ExitedFailure} {
		b.add(s, Restart, "", spec.And(mayAct, spec.Not(spec.V(Replacing)), PolicyRestarts), BackOff, WaitBackoff,
			"the policy restarts the container: wait for the back-off, which grows to its cap",
			spec.Set(BackoffLevel, NextBackoff))
	}
	b.add(BackOff, BackoffDone, "", mayAct, Created, CreateInstance,
		"the back-off is over: create the next instance", spec.SetEnum(Code, "None"))
	b.add(ExitedFailure, Replace, "", spec.And(mayAct, spec.V(Replacing)), Created, CreateInstance,
		"create the instance that replaces the one killed for a spec change, whatever the policy",
		spec.Set(Replacing, spec.B(false)), spec.SetEnum(Code, "None"))
	for _, s := range []spec.State{Created, Running} {
		b.add(s, Stop, "", spec.And(current, spec.P(PTerminating), StopInOrder), ExitedFailure, KillInstance,
			"the pod terminates: kill the instance (sidecars last, in reverse order)", killed)
	}
	for _, s := range []spec.State{NotCreated, Created, ExitedSuccess, ExitedFailure, BackOff} {
		b.add(s, Purge, "", stale, NotCreated, RemoveInstance,
			"an instance of a previous sandbox is removed; nothing of it counts in the new one",
			spec.Set(Gen, spec.P(PSandbox)), spec.Set(Started, spec.B(false)), spec.SetEnum(Code, "None"), spec.Set(Replacing, spec.B(false)))
	}

	b.add(Running, Exit, "Success", spec.Eq(spec.P(PCode), spec.E(ExitCodeDomain, "Zero")), ExitedSuccess, 0,
		"the instance exited with 0", spec.Set(Code, spec.P(PCode)))
	runtimeFailure := spec.Or(spec.Eq(spec.P(PCode), spec.E(ExitCodeDomain, "Rule")), spec.Eq(spec.P(PCode), spec.E(ExitCodeDomain, "Other")))
	b.add(Running, Exit, "Failure", runtimeFailure, ExitedFailure, 0,
		"the instance exited with another code", spec.Set(Code, spec.P(PCode)))
	b.ignore(Running, Exit, spec.Or(spec.Eq(spec.P(PCode), spec.E(ExitCodeDomain, "None")), spec.Eq(spec.P(PCode), spec.E(ExitCodeDomain, "Killed"))),
		"the runtime reports no exit code of its own (the kubelet's kills are its own rows)")
	probed := kindIs("Sidecar", "Regular")
	b.add(Running, StartupOK, "", spec.And(spec.Not(spec.V(Started)), probed), Running, 0,
		"the container started", spec.Set(Started, spec.B(true)))
	b.ignore(Running, StartupOK, spec.Or(spec.V(Started), spec.Not(probed)), "the container had started, or has no startup probe (init and ephemeral containers)")
	b.add(Running, LivenessFail, "", spec.And(spec.V(Started), kindIs("Sidecar", "Regular")), ExitedFailure, KillInstance,
		"a started sidecar or regular container whose liveness probe fails is killed", killed)
	b.ignore(Running, LivenessFail, spec.Not(spec.And(spec.V(Started), kindIs("Sidecar", "Regular"))),
		"no liveness probe runs before the startup probe, nor on init or ephemeral containers")
	b.add(Running, StartupFail, "", spec.And(spec.Not(spec.V(Started)), probed), ExitedFailure, KillInstance,
		"a sidecar or regular container whose startup probe fails is killed", killed)
	b.ignore(Running, StartupFail, spec.Or(spec.V(Started), spec.Not(probed)),
		"the startup probe runs only until it succeeds, and not on init or ephemeral containers")
	b.add(Running, RanLong, "", spec.Lt(spec.N(0), spec.V(BackoffLevel)), Running, 0,
		"a long run resets the back-off", spec.Set(BackoffLevel, spec.N(0)))
	b.ignore(Running, RanLong, spec.Eq(spec.V(BackoffLevel), spec.N(0)), "no back-off to reset")
	b.add(Running, SpecChange, "", kindIs("Sidecar", "Regular"), ExitedFailure, KillInstance,
		"the spec changed: kill the instance and replace it", killed, spec.Set(Replacing, spec.B(true)))
	b.ignore(Running, SpecChange, spec.Not(kindIs("Sidecar", "Regular")), "the spec of init and ephemeral containers cannot change")
	b.add(Running, SandboxDied, "", spec.B(true), ExitedFailure, 0,
		"the instance died with its sandbox", spec.SetEnum(Code, "Other"))
	for _, s := range allCtrs {
		for _, ev := range []spec.Event{Exit, StartupOK, LivenessFail, StartupFail, RanLong, SpecChange, SandboxDied} {
			if s != Running {
				b.ignore(s, ev, spec.B(true), "only a running instance exits, is probed, runs long or is replaced; others wait for the kubelet's decisions")
			}
		}
	}
	return b.rows
}
