package spec

// Var is a per-pod record variable. Guards read variables; transitions write
// them. A record that does not exist (Absent) has every variable at zero.
type Var struct {
	Name   string // Go field name; the TLA+ field is the same with a lower-case first letter
	Domain *Domain
	Doc    string
	// Shell marks a variable of the engine's shell, not of the record: what
	// the Core's effects set up (see ShellVars). Only properties read it.
	Shell bool
	// Explorer marks a shell variable that only the explorer keeps (what it
	// sees of the effects beyond the spec's variables: sync contexts, the
	// timer queue's entries, the grace a sync call is handed).
	// tla/PodLifecycle.tla has no such variable, so a property that reads
	// one is generated for the explorer alone.
	Explorer bool
}

// The record variables (semantics 1.3). Derived facts (termination
// requested, terminated, finished, ...) are not variables: they follow from
// the state, see the predicates in predicates.go.
var (
	Static = &Var{Name: "Static", Domain: BoolDomain,
		Doc: "The pod came from a non-apiserver source; at most one static UID per full name may run."}
	HasConfig = &Var{Name: "HasConfig", Domain: BoolDomain,
		Doc: "A real pod spec is known; false for a pod known only from the container runtime."}
	Started = &Var{Name: "Started", Domain: BoolDomain,
		Doc: "The worker allowed the pod to start (kubelet startedAt)."}
	Deleted = &Var{Name: "Deleted", Domain: BoolDomain,
		Doc: "The pod has a deletion timestamp, or is an orphan or runtime-only pod."}
	Evicted = &Var{Name: "Evicted", Domain: BoolDomain,
		Doc: "A kill carried Evict; the pod's content may be removed at once."}
	RestartRequested = &Var{Name: "RestartRequested", Domain: BoolDomain,
		Doc: "A create arrived for this UID after termination was requested; SyncKnownPods may remove the finished record so the UID can start again."}
	ObservedRuntime = &Var{Name: "ObservedRuntime", Domain: BoolDomain,
		Doc: "A runtime-only kill was seen: something of this UID exists in the runtime and must be terminated."}
	Grace = &Var{Name: "Grace", Domain: GraceDomain,
		Doc: "Effective grace period in seconds once set (0: not set); it only shrinks and is never below 1 once set."}
	Pending = &Var{Name: "Pending", Domain: PendingDomain,
		Doc: "The record's mailbox: the latest update not yet taken by the worker."}
	InFlight = &Var{Name: "InFlight", Domain: InFlightDomain,
		Doc: "The sync function the worker is running for this record."}
	Waiters = &Var{Name: "Waiters", Domain: BoolDomain,
		Doc: "Kill completion channels are registered and not yet closed."}
)

// Vars lists every record variable in a fixed order (the order of the
// generated struct fields and of trace records).
var Vars = []*Var{Static, HasConfig, Started, Deleted, Evicted, RestartRequested, ObservedRuntime, Grace, Pending, InFlight, Waiters}

// ShellVars are the per-pod facts that the Core's effects create and the
// shell keeps (semantics 1.5): TLA+ models each as a function of the pod
// (loop[p], ...) and the explorer tracks them by carrying out the effects.
// The table's rows never read or write them; properties do.
// The explorer's own (Explorer) come last; TLA+ has them not.
var ShellVars = []*Var{Loop, Timer, Channels, CancelOwed, StaleTimer, SyncGrace, AskedGrace}

var (
	Loop = &Var{Name: "Loop", Domain: BoolDomain, Shell: true,
		Doc: "A worker loop for the pod was started (RunLoop) and has not ended (Next returned false)."}
	Timer = &Var{Name: "Timer", Domain: BoolDomain, Shell: true,
		Doc: "The pod's retry, resync or back-off timer is armed (ArmTimer, not yet fired or stopped)."}
	Channels = &Var{Name: "Channels", Domain: ChannelsDomain, Shell: true,
		Doc: "Kill completion channels handed to the engine and not yet closed."}

	CancelOwed = &Var{Name: "CancelOwed", Domain: BoolDomain, Shell: true, Explorer: true,
		Doc: "A row with the Cancel effect fired while the shell held a sync context for the pod, and no CancelSync has cancelled it since."}
	StaleTimer = &Var{Name: "StaleTimer", Domain: BoolDomain, Shell: true, Explorer: true,
		Doc: "On this step the shell's timer queue fired a timer of the pod that was stopped or replaced: an entry that ended, or one of an earlier incarnation of its UID."}
	SyncGrace = &Var{Name: "SyncGrace", Domain: GraceDomain, Shell: true, Explorer: true,
		Doc: "The grace period of the sync call handed out on this step (Work.GracePeriod; 0: none)."}
	AskedGrace = &Var{Name: "AskedGrace", Domain: GraceDomain, Shell: true, Explorer: true,
		Doc: "The least grace period a kill, a deletion or housekeeping asked for since the record was made (at least 1; 0: none asked)."}
)

// Param is an event parameter: a fact about the input that guards read. World
// parameters are not supplied by the caller; the machine computes them from
// the other records (the static-pod slot and waiting order).
type Param struct {
	Name   string
	Domain *Domain
	Doc    string
	World  bool
}

// The event parameters.
var (
	PStatic = &Param{Name: "Static", Domain: BoolDomain,
		Doc: "The update's pod is static (config source annotation present and not \"api\")."}
	PDeleting = &Param{Name: "Deleting", Domain: BoolDomain,
		Doc: "The update's pod has a deletion timestamp."}
	PTerminalPhase = &Param{Name: "TerminalPhase", Domain: BoolDomain,
		Doc: "The update's pod has API phase Succeeded or Failed."}
	PRuntimeTerminal = &Param{Name: "RuntimeTerminal", Domain: BoolDomain,
		Doc: "The cached runtime status of the pod has no running container and no ready sandbox."}
	PGraceOverride = &Param{Name: "GraceOverride", Domain: GraceRequestDomain,
		Doc: "The smaller of the pod's deletion grace period and the kill's override; NoGrace when neither is given."}
	PSpecGrace = &Param{Name: "SpecGrace", Domain: GraceDomain,
		Doc: "The pod's spec.terminationGracePeriodSeconds (0 when unset or unknown)."}
	PNotify = &Param{Name: "Notify", Domain: BoolDomain,
		Doc: "The update carries kill options with a completion channel."}
	PEvict = &Param{Name: "Evict", Domain: BoolDomain,
		Doc: "The kill is an eviction."}
	POrphan = &Param{Name: "Orphan", Domain: BoolDomain,
		Doc: "SyncKnownPods did not list the UID among the desired pods."}
	PSlotFree = &Param{Name: "SlotFree", Domain: BoolDomain, World: true,
		Doc: "No other UID with the pod's full name holds the static-pod slot."}
	PFirstInLine = &Param{Name: "FirstInLine", Domain: BoolDomain, World: true,
		Doc: "The pod is the first live waiter for its full name."}
)

// Params lists every parameter in a fixed order.
var Params = []*Param{PStatic, PDeleting, PTerminalPhase, PRuntimeTerminal, PGraceOverride, PSpecGrace, PNotify, PEvict, POrphan, PSlotFree, PFirstInLine}
