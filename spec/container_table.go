package spec

// ContainerTable is the container lifecycle: every transition of one
// container's record within a pod. It is built once; callers must not
// modify it.
var ContainerTable = buildContainerTable()

// Guards of the container table, named after what they mean. They are
// variables so that properties and mutants can name them.
var (
	kindIs = func(kinds ...string) Expr {
		var es []Expr
		for _, k := range kinds {
			es = append(es, Eq(P(PKind), E(ContainerKindDomain, k)))
		}
		return Or(es...)
	}
	codeIs    = func(v *Var, c string) Expr { return Eq(V(v), E(ExitCodeDomain, c)) }
	current   = Eq(V(CGen), P(PSandbox))
	stale     = Lt(V(CGen), P(PSandbox))
	mayAct    = And(current, P(PSandboxReady), Not(P(PTerminating)))
	initOrder = kindIs("Init", "Sidecar")

	// BeforeDone: the container that gates this one is done in the
	// current sandbox: an init container exited with 0, a sidecar passed
	// its startup probe. Nothing of a previous sandbox counts.
	BeforeDone = And(Eq(P(PBeforeGen), P(PSandbox)), Or(
		And(Eq(P(PBeforeKind), E(ContainerKindDomain, "Init")), Eq(P(PBeforeState), E(ContainerStateDomain, "ExitedSuccess"))),
		And(Eq(P(PBeforeKind), E(ContainerKindDomain, "Sidecar")), P(PBeforeStarted))))
	// MayStart: the container's gate is open.
	MayStart = Or(P(PFirst), BeforeDone)

	// RuleMatches: one of the container's restartPolicyRules restarts it on
	// its last exit code (rules are checked before the policy).
	RuleMatches = And(P(PRule), codeIs(CCode, "Rule"))
	// PolicyRestarts: the restart policy, with restartPolicyRules, restarts
	// the container after its last exit. Ephemeral containers never restart.
	PolicyRestarts = And(Not(kindIs("Ephemeral")), Or(RuleMatches,
		Eq(P(PPolicy), E(RestartPolicyDomain, "Always")),
		And(Eq(P(PPolicy), E(RestartPolicyDomain, "OnFailure")), Not(codeIs(CCode, "Zero")))))
	// NextBackoff is the back-off level after one more restart: one
	// higher, up to the cap.
	NextBackoff = nextLevel(0)
	// StopInOrder: regular, init and ephemeral containers stop at once; a
	// sidecar only after every regular container and every later sidecar.
	StopInOrder = Or(Not(kindIs("Sidecar")), And(P(PRegularsStopped), P(PLaterSidecarsStopped)))
	// MayRunAgain: the container's instance of the current sandbox will
	// run again unless the pod terminates: it waits in back-off, is to be
	// restarted or replaced, or is created and not started.
	MayRunAgain = And(current, Or(ContainerSchema.In(BackOff, Created),
		And(ContainerSchema.In(ExitedSuccess, ExitedFailure), Or(V(CReplacing), PolicyRestarts))))
)

// nextLevel is level+1 capped at BackoffCap, as the expression language
// has no addition: if Backoff = l then l+1 else (the same for l+1).
func nextLevel(l int) Expr {
	if l >= BackoffCap-1 {
		return N(BackoffCap)
	}
	return If(Eq(V(CBackoff), N(l)), N(l+1), nextLevel(l+1))
}

type cbuilder struct{ rows []Row }

func (b *cbuilder) add(from State, ev Event, tag string, guard Expr, to State, eff Effect, doc string, sets ...Assign) {
	b.rows = append(b.rows, Row{
		ID: containerStateNames[from] + containerEventInfo[ev].Name + tag, Ref: "C", From: from, Event: ev,
		Guard: guard, To: to, Set: sets, Effects: eff, Doc: doc,
	})
}

func (b *cbuilder) ignore(from State, ev Event, guard Expr, doc string) {
	b.add(from, ev, "Ignored", guard, from, 0, doc)
}

var (
	killed  = setEnum(CCode, "Killed")
	allCtrs = []State{NotCreated, Created, CRunning, ExitedSuccess, ExitedFailure, BackOff}
)

func buildContainerTable() []Row {
	b := &cbuilder{}
	b.add(NotCreated, CStart, "", And(mayAct, MayStart), Created, CreateInstance,
		"the container's gate is open in the current sandbox: create its instance")
	b.add(Created, CBegin, "", mayAct, CRunning, StartInstance,
		"start the created instance")
	for _, s := range []State{ExitedSuccess, ExitedFailure} {
		b.add(s, CRestart, "", And(mayAct, Not(V(CReplacing)), PolicyRestarts), BackOff, WaitBackoff,
			"the policy restarts the container: wait for the back-off, which grows to its cap",
			set(CBackoff, NextBackoff))
	}
	b.add(BackOff, CBackoffDone, "", mayAct, Created, CreateInstance,
		"the back-off is over: create the next instance", setEnum(CCode, "None"))
	b.add(ExitedFailure, CReplace, "", And(mayAct, V(CReplacing)), Created, CreateInstance,
		"create the instance that replaces the one killed for a spec change, whatever the policy",
		set(CReplacing, B(false)), setEnum(CCode, "None"))
	for _, s := range []State{Created, CRunning} {
		b.add(s, CStop, "", And(current, P(PTerminating), StopInOrder), ExitedFailure, KillInstance,
			"the pod terminates: kill the instance (sidecars last, in reverse order)", killed)
	}
	for _, s := range []State{NotCreated, Created, ExitedSuccess, ExitedFailure, BackOff} {
		b.add(s, CPurge, "", stale, NotCreated, RemoveInstance,
			"an instance of a previous sandbox is removed; nothing of it counts in the new one",
			set(CGen, P(PSandbox)), set(CStarted, B(false)), setEnum(CCode, "None"), set(CReplacing, B(false)))
	}

	b.add(CRunning, CExit, "Success", Eq(P(PCode), E(ExitCodeDomain, "Zero")), ExitedSuccess, 0,
		"the instance exited with 0", set(CCode, P(PCode)))
	runtimeFailure := Or(Eq(P(PCode), E(ExitCodeDomain, "Rule")), Eq(P(PCode), E(ExitCodeDomain, "Other")))
	b.add(CRunning, CExit, "Failure", runtimeFailure, ExitedFailure, 0,
		"the instance exited with another code", set(CCode, P(PCode)))
	b.ignore(CRunning, CExit, Or(Eq(P(PCode), E(ExitCodeDomain, "None")), Eq(P(PCode), E(ExitCodeDomain, "Killed"))),
		"the runtime reports no exit code of its own (the kubelet's kills are its own rows)")
	probed := kindIs("Sidecar", "Regular")
	b.add(CRunning, CStartupOK, "", And(Not(V(CStarted)), probed), CRunning, 0,
		"the container started", set(CStarted, B(true)))
	b.ignore(CRunning, CStartupOK, Or(V(CStarted), Not(probed)), "the container had started, or has no startup probe (init and ephemeral containers)")
	b.add(CRunning, CLivenessFail, "", And(V(CStarted), kindIs("Sidecar", "Regular")), ExitedFailure, KillInstance,
		"a started sidecar or regular container whose liveness probe fails is killed", killed)
	b.ignore(CRunning, CLivenessFail, Not(And(V(CStarted), kindIs("Sidecar", "Regular"))),
		"no liveness probe runs before the startup probe, nor on init or ephemeral containers")
	b.add(CRunning, CRanLong, "", Lt(N(0), V(CBackoff)), CRunning, 0,
		"a long run resets the back-off", set(CBackoff, N(0)))
	b.ignore(CRunning, CRanLong, Eq(V(CBackoff), N(0)), "no back-off to reset")
	b.add(CRunning, CSpecChange, "", kindIs("Sidecar", "Regular"), ExitedFailure, KillInstance,
		"the spec changed: kill the instance and replace it", killed, set(CReplacing, B(true)))
	b.ignore(CRunning, CSpecChange, Not(kindIs("Sidecar", "Regular")), "the spec of init and ephemeral containers cannot change")
	b.add(CRunning, CSandboxDied, "", B(true), ExitedFailure, 0,
		"the instance died with its sandbox", setEnum(CCode, "Other"))
	for _, s := range allCtrs {
		for _, ev := range []Event{CExit, CStartupOK, CLivenessFail, CRanLong, CSpecChange, CSandboxDied} {
			if s != CRunning {
				b.ignore(s, ev, B(true), "only a running instance exits, is probed, runs long or is replaced; others wait for the kubelet's decisions")
			}
		}
	}
	return b.rows
}
