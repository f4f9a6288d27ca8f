package spec

import (
	"errors"
	"fmt"
)

// PropertyKind says how a property quantifies over time.
type PropertyKind uint8

const (
	// Invariant holds in every reachable state.
	Invariant PropertyKind = iota
	// StepProperty holds on every step ([][A]_vars): expressions read the
	// state before the step, and after it through Next.
	StepProperty
	// LeadsTo: whenever From holds, Holds holds then or later (From ~>
	// Holds), on every behaviour that is fair (see tla/PodLifecycle.tla's
	// Fairness).
	LeadsTo
)

func (k PropertyKind) String() string {
	return [...]string{"invariant", "step property", "leads-to property"}[k]
}

// Property is one property of the lifecycle, stated once for every pod:
// the generator renders it as a TLA+ operator (tla/PodLifecycleProperties.tla,
// with \A p \in Pods around it) and as the explorer's Go check
// (explore/zz_generated.properties.go), so TLC and the explorer check the
// same formula.
type Property struct {
	Name string
	Kind PropertyKind
	// Ref is the label in docs/semantics.md the property comes from.
	Ref  string
	Doc  string
	From Expr // LeadsTo only
	// Holds is the property of one pod (Invariant, StepProperty) or what
	// From leads to (LeadsTo).
	Holds Expr
}

// Expressions over the record, named after what they mean.
var (
	known       = InPred("HasRecord")
	live        = And(known, Not(InPred("IsFinished")))
	livesOn     = And(known, Next(known))
	holdsSlot   = And(V(Static), V(Started), InPred("MayHoldSlot"))
	staticWaits = And(In(Waiting), V(Static))
	// workType orders the three phases: set up and run, terminate, clean up.
	workType = If(InPred("IsTerminated"), N(2), If(InPred("TerminationRequested"), N(1), N(0)))
)

// unchangedExcept holds when every record variable but the given ones keeps
// its value across the step.
func unchangedExcept(skip ...*Var) Expr {
	var same []Expr
	for _, v := range Vars {
		keep := true
		for _, s := range skip {
			keep = keep && v != s
		}
		if keep {
			same = append(same, Eq(V(v), Next(V(v))))
		}
	}
	return And(same...)
}

// typeOK: every variable in its domain, and a UID without a record has
// every record variable at zero.
func typeOK() Expr {
	var parts, zero []Expr
	for _, v := range append(append([]*Var{}, Vars...), ShellVars...) {
		if v.Explorer {
			continue // only the explorer has it: TLA+'s TypeOK could not name it
		}
		parts = append(parts, InDomain(v))
		switch {
		case v.Shell:
		case v.Domain.Kind == Bool:
			zero = append(zero, Not(V(v)))
		case v.Domain.Kind == Int:
			zero = append(zero, Eq(V(v), N(max(0, v.Domain.Min))))
		default:
			zero = append(zero, Eq(V(v), Expr{Op: OpConst, Value: 0, Domain: v.Domain}))
		}
	}
	parts = append(parts, Implies(Not(known), And(zero...)), Implies(Lt(N(0), W(WaitingCount)), W(StaticPod)))
	return And(parts...)
}

// Properties are the lifecycle's properties, checked by TLC and by the
// explorer on every shipped configuration that lists them. Each can fail:
// TestPropertiesCanFail finds a state or step that violates it, and the
// mutation tests of package explore make the engine violate each one.
var Properties = []Property{
	{Name: "TypeOK", Kind: Invariant, Ref: "1.3", Holds: typeOK(),
		Doc: "every variable lies in its domain; a UID without a record has every record variable at zero; only static pods wait for a full name"},
	{Name: "Inv7", Kind: Invariant, Ref: "Inv7", Holds: Implies(InPred("TerminationStarted"), Not(Is(InFlight, "SyncPod"))),
		Doc: "once the worker took the termination, no SyncPod runs"},
	{Name: "Inv8", Kind: Invariant, Ref: "Inv8", Holds: Implies(Is(InFlight, "SyncTerminatedPod"), In(Terminated)),
		Doc: "SyncTerminatedPod runs only for a terminated record"},
	{Name: "Inv13", Kind: Invariant, Ref: "Inv13", Holds: Implies(Not(Is(InFlight, "None")), And(live, V(Loop))),
		Doc: "a sync call runs only for a live record, inside the pod's one worker loop"},
	{Name: "Inv18", Kind: Invariant, Ref: "Inv18", Holds: Implies(Is(Pending, "Parked"), staticWaits),
		Doc: "an update is held back only for a static pod waiting for its full name"},
	{Name: "Inv22", Kind: Invariant, Ref: "Inv22", Holds: Implies(In(TerminationRequested), Le(N(1), V(Grace))),
		Doc: "a termination requested by an update carries a grace period of at least 1 s"},
	{Name: "Inv26", Kind: Invariant, Ref: "Inv26", Holds: Implies(V(Waiters), In(TerminationRequested, Terminating)),
		Doc: "kill waiters exist only while the pod is being terminated"},
	{Name: "Inv38", Kind: Invariant, Ref: "Inv38", Holds: Le(W(SlotHolders), N(1)),
		Doc: "at most one static UID holds a full name"},
	{Name: "Inv39", Kind: Invariant, Ref: "Inv39", Holds: Implies(And(V(Static), Is(InFlight, "SyncPod")), holdsSlot),
		Doc: "a static pod's SyncPod runs only while the pod holds its full name"},
	{Name: "Inv40", Kind: Invariant, Ref: "Inv40", Holds: Eq(W(WaitingCount), If(staticWaits, N(1), N(0))),
		Doc: "the waiting order lists every waiting static pod exactly once, and nothing else"},
	{Name: "Inv41", Kind: Invariant, Ref: "Inv41", Holds: Implies(And(V(Static), Not(V(Started))), Is(InFlight, "None")),
		Doc: "a static pod that never started never ran a sync call"},
	{Name: "WaitersAreOpenChannels", Kind: Invariant, Ref: "E1", Holds: Eq(V(Waiters), Lt(N(0), V(Channels))),
		Doc: "the record's waiters flag is set exactly while the engine holds open kill completion channels"},
	{Name: "NoLostWakeup", Kind: Invariant, Ref: "E2",
		Holds: And(
			Implies(Is(Pending, "Queued"), V(Loop)),
			Implies(And(live, Is(InFlight, "None"), Not(Is(Pending, "Queued"))), V(Timer))),
		Doc: "queued work has a worker loop; an idle live record has its resync or retry timer armed"},
	{Name: "TimerOnlyWhileLive", Kind: Invariant, Ref: "E3", Holds: Implies(V(Timer), live),
		Doc: "a timer is armed only for a live record: finishing or removing a record stops it"},

	{Name: "Inv1", Kind: StepProperty, Ref: "Inv1", Holds: Implies(And(livesOn, InPred("TerminationRequested")), Next(InPred("TerminationRequested"))),
		Doc: "termination, once requested, is never withdrawn"},
	{Name: "Inv5", Kind: StepProperty, Ref: "Inv5", Holds: Implies(livesOn, Le(workType, Next(workType))),
		Doc: "the phase only moves forward"},
	{Name: "Inv6", Kind: StepProperty, Ref: "Inv6", Holds: Implies(And(Not(Is(InFlight, "SyncPod")), Next(Is(InFlight, "SyncPod"))), Next(In(Running))),
		Doc: "no SyncPod starts once termination was requested"},
	{Name: "Inv9", Kind: StepProperty, Ref: "Inv9", Holds: Implies(And(Is(InFlight, "SyncTerminatingRuntimePod"), Next(Is(InFlight, "None"))), Next(In(Terminating, Absent))),
		Doc: "a runtime-only pod whose termination succeeded is removed at once"},
	{Name: "Inv10", Kind: StepProperty, Ref: "Inv10", Holds: Implies(Next(In(Running)), In(Waiting, Running)),
		Doc: "a pod starts running only from Waiting"},
	{Name: "Inv11", Kind: StepProperty, Ref: "Inv11", Holds: Implies(And(In(Finished), Next(In(Finished))), unchangedExcept(RestartRequested)),
		Doc: "a finished record ignores everything but a create, which asks for a restart"},
	{Name: "Inv23", Kind: StepProperty, Ref: "Inv23", Holds: Implies(And(livesOn, Not(Eq(V(Grace), N(0)))), And(Le(N(1), Next(V(Grace))), Le(Next(V(Grace)), V(Grace)))),
		Doc: "the grace period never grows within a record"},
	{Name: "Inv36", Kind: StepProperty, Ref: "Inv36", Holds: Implies(W(Synced), Next(W(Synced))),
		Doc: "once SyncKnownPods has run, it has"},
	{Name: "Inv40Order", Kind: StepProperty, Ref: "Inv40", Holds: Implies(And(staticWaits, Next(In(Running))), W(FirstInWaiting)),
		Doc: "a static pod starts only as the first in line for its full name"},
	{Name: "Inv44", Kind: StepProperty, Ref: "Inv44",
		Holds: Implies(And(live, Next(Not(known))), Or(And(Not(V(Started)), Not(V(ObservedRuntime))), Is(InFlight, "SyncTerminatingRuntimePod"))),
		Doc:   "a record that may have containers is removed only once finished, or when its runtime-only termination succeeded"},
	{Name: "KillsReleasedOnTermination", Kind: StepProperty, Ref: "E1", Holds: Implies(Lt(Next(V(Channels)), V(Channels)), Next(Or(Not(known), InPred("IsTerminated")))),
		Doc: "kill completion channels held by the engine are closed only when the pod terminated or its record is gone"},

	{Name: "SyncCancelledFirst", Kind: StepProperty, Ref: "E4",
		Holds: Implies(And(Is(InFlight, "None"), Next(Not(Is(InFlight, "None")))), Not(Next(V(CancelOwed)))),
		Doc:   "a sync in flight whose pod is being cancelled has its context cancelled before the pod's next sync starts"},
	{Name: "NoStaleTimer", Kind: StepProperty, Ref: "E3", Holds: Not(Next(V(StaleTimer))),
		Doc: "a timer never fires for a pod after its entry ended, nor for an earlier incarnation of its UID"},
	{Name: "SyncGraceWithinAsked", Kind: StepProperty, Ref: "Inv23",
		Holds: Implies(And(Lt(N(0), Next(V(SyncGrace))), Lt(N(0), V(AskedGrace))), Le(Next(V(SyncGrace)), V(AskedGrace))),
		Doc:   "the grace period a sync call is handed never exceeds a grace period asked for earlier"},

	{Name: "TerminationCompletes", Kind: LeadsTo, Ref: "1.5", From: And(InPred("TerminationRequested"), Not(InPred("IsFinished"))), Holds: Or(Not(known), InPred("IsFinished")),
		Doc: "a pod whose termination was requested finishes or is removed"},
	{Name: "KillsComplete", Kind: LeadsTo, Ref: "E1", From: Lt(N(0), V(Channels)), Holds: Eq(V(Channels), N(0)),
		Doc: "every kill completion channel handed to the engine is eventually closed"},
	{Name: "DesiredPodsStart", Kind: LeadsTo, Ref: "1.5", From: And(Not(W(StaticPod)), In(Waiting)), Holds: Not(In(Waiting)),
		Doc: "a pod that is not static and waits to start eventually starts, unless it is terminated or removed first"},
	{Name: "StaticPodsStart", Kind: LeadsTo, Ref: "T6", From: And(staticWaits, W(FirstInWaiting), Eq(W(SlotHolders), N(0))), Holds: Not(In(Waiting)),
		Doc: "a static pod first in line for a free full name eventually starts, unless it is terminated or removed first"},
}

// ExplorerOnly reports whether the property reads a variable only the
// explorer keeps (Var.Explorer): it is generated for the explorer alone.
func (p Property) ExplorerOnly() bool { return readsExplorer(p.From) || readsExplorer(p.Holds) }

func readsExplorer(e Expr) bool {
	if e.Op == OpVar && e.Var != nil && e.Var.Explorer {
		return true
	}
	for _, a := range e.Args {
		if readsExplorer(a) {
			return true
		}
	}
	return false
}

// PropertyNamed returns the property called name.
func PropertyNamed(name string) (Property, bool) {
	for _, p := range Properties {
		if p.Name == name {
			return p, true
		}
	}
	return Property{}, false
}

// WellFormed reports what is wrong with p's form: no reference or doc, a
// formula that is not Boolean, From on a property that is not leads-to, or
// the end of a step read by a property that is not a step property.
func (p Property) WellFormed() error {
	var errs []error
	if p.Ref == "" || p.Doc == "" {
		errs = append(errs, fmt.Errorf("%s: no reference or doc", p.Name))
	}
	exprs := []Expr{p.Holds}
	if p.Kind == LeadsTo {
		exprs = append(exprs, p.From)
	} else if p.From.Op != OpConst || p.From.Domain != nil || p.From.Value != 0 {
		errs = append(errs, fmt.Errorf("%s: From on a %s", p.Name, p.Kind))
	}
	for _, e := range exprs {
		if k, _, err := e.typeOf(); err != nil || k != Bool {
			errs = append(errs, fmt.Errorf("%s: %s is not a Boolean formula: %v", p.Name, e, err))
		}
		if p.Kind != StepProperty && e.readsNext() {
			errs = append(errs, fmt.Errorf("%s: a %s reads the end of a step", p.Name, p.Kind))
		}
	}
	return errors.Join(errs...)
}

// readsNext holds when e reads the end of a step.
func (e Expr) readsNext() bool {
	if e.Op == OpNext {
		return true
	}
	for _, a := range e.Args {
		if a.readsNext() {
			return true
		}
	}
	return false
}
