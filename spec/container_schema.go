package spec

// The container table: one container instance's lifecycle inside a pod,
// and the pod-level facts that gate it (kubelet: kuberuntime's
// computePodActions and computeInitContainerActions). Its states, events,
// variables and parameters are values of the same types as the pod
// table's, indexes into ContainerSchema.

// The container table's states.
const (
	// NotCreated: no instance of the container exists in the current
	// sandbox (none yet, or the previous sandbox's was purged).
	NotCreated State = iota
	// Created: the runtime created the instance; it has not started.
	Created
	// CRunning: the instance runs.
	CRunning
	// ExitedSuccess: the instance exited with code 0.
	ExitedSuccess
	// ExitedFailure: the instance exited with another code, or was killed.
	ExitedFailure
	// BackOff: the container is to be restarted and waits for its back-off.
	BackOff

	numContainerStates = iota
)

var containerStateNames = [numContainerStates]string{"NotCreated", "Created", "Running", "ExitedSuccess", "ExitedFailure", "BackOff"}

// The container table's events: the kubelet's decisions (the first
// seven), then the runtime's observations and the other inputs, which
// every state must answer.
const (
	// CStart: create an instance of the container (CreateContainer).
	CStart Event = iota
	// CBegin: start the created instance (StartContainer).
	CBegin
	// CRestart: the exited instance is to be restarted: wait for the back-off.
	CRestart
	// CBackoffDone: the back-off is over: create the next instance.
	CBackoffDone
	// CReplace: create the instance that replaces one killed for a spec change.
	CReplace
	// CStop: kill the instance because the pod terminates (or its regular
	// containers are done), in the order sidecars need.
	CStop
	// CPurge: remove an instance of a previous sandbox.
	CPurge
	// CExit: the runtime reports that the instance exited.
	CExit
	// CStartupOK: the startup probe succeeded.
	CStartupOK
	// CLivenessFail: the liveness probe failed.
	CLivenessFail
	// CRanLong: the instance ran longer than the back-off reset period.
	CRanLong
	// CSpecChange: the container's spec (its image) changed.
	CSpecChange
	// CSandboxDied: the pod's sandbox died, and every instance in it.
	CSandboxDied

	numContainerEvents = iota
)

// The container table's domains.
var (
	ContainerStateDomain = &Domain{Name: "ContainerState", Kind: Enum, Values: containerStateNames[:]}
	ContainerKindDomain  = &Domain{Name: "ContainerKind", Kind: Enum, Values: []string{"Init", "Sidecar", "Regular", "Ephemeral"}}
	// RestartPolicyDomain is a container's effective restart policy: the
	// pod's, a container-level override, Always for a sidecar, OnFailure
	// for an init container of an Always pod, Never for an ephemeral one.
	RestartPolicyDomain = &Domain{Name: "RestartPolicy", Kind: Enum, Values: []string{"Never", "OnFailure", "Always"}}
	// ExitCodeDomain abstracts exit codes: none yet, 0, a code one of the
	// container's restartPolicyRules names (action Restart), any other
	// code, and the kubelet's own kill.
	ExitCodeDomain = &Domain{Name: "ExitCode", Kind: Enum, Values: []string{"None", "Zero", "Rule", "Other", "Killed"}}
	// GenDomain is a sandbox generation; the model checks two (0 and 1).
	GenDomain = &Domain{Name: "Gen", Kind: Int, Min: 0, Max: 2}
	// BackoffDomain is the back-off level; BackoffCap is its cap.
	BackoffDomain  = &Domain{Name: "Backoff", Kind: Int, Min: 0, Max: BackoffCap}
	PodPhaseDomain = &Domain{Name: "PodPhase", Kind: Enum, Values: []string{"Pending", "Running", "Succeeded", "Failed"}}
)

// BackoffCap is the level at which the back-off stops growing (kubelet:
// MaxContainerBackOff, 300 s, reached by doubling from 10 s).
const BackoffCap = 2

// The container record's variables.
var (
	CGen = &Var{Name: "Gen", Domain: GenDomain,
		Doc: "The sandbox generation the instance belongs to."}
	CStarted = &Var{Name: "Started", Domain: BoolDomain,
		Doc: "The container passed its startup probe in this sandbox (a sidecar counts as started)."}
	CCode = &Var{Name: "Code", Domain: ExitCodeDomain,
		Doc: "The exit code of the last instance."}
	CBackoff = &Var{Name: "Backoff", Domain: BackoffDomain,
		Doc: "The back-off level: it grows with each restart up to the cap and resets after a long run."}
	CReplacing = &Var{Name: "Replacing", Domain: BoolDomain,
		Doc: "The instance was killed for a spec change: the next start replaces it, whatever the restart policy."}
)

// ContainerVars lists the container record's variables in order.
var ContainerVars = []*Var{CGen, CStarted, CCode, CBackoff, CReplacing}

// The container table's parameters: the container's spec, what the
// runtime reports, and the pod-level facts the model computes from the
// other containers (World).
var (
	PKind = &Param{Name: "Kind", Domain: ContainerKindDomain,
		Doc: "The container's kind."}
	PPolicy = &Param{Name: "Policy", Domain: RestartPolicyDomain,
		Doc: "The container's effective restart policy."}
	PRule = &Param{Name: "Rule", Domain: BoolDomain,
		Doc: "The container's restartPolicyRules restart it on the exit code Rule."}
	PCode = &Param{Name: "Code", Domain: ExitCodeDomain,
		Doc: "The exit code the runtime reports."}
	PSandbox = &Param{Name: "Sandbox", Domain: GenDomain, World: true,
		Doc: "The pod's current sandbox generation."}
	PSandboxReady = &Param{Name: "SandboxReady", Domain: BoolDomain, World: true,
		Doc: "The pod's current sandbox is ready."}
	PTerminating = &Param{Name: "Terminating", Domain: BoolDomain, World: true,
		Doc: "The pod terminates: no container may start; running ones are stopped."}
	PFirst = &Param{Name: "First", Domain: BoolDomain, World: true,
		Doc: "Nothing gates the container: it is the first in the init order, or a regular or ephemeral container of a pod with no init containers."}
	PBeforeKind = &Param{Name: "BeforeKind", Domain: ContainerKindDomain, World: true,
		Doc: "The kind of the container that gates this one: its predecessor in the init order, or, for a regular or ephemeral container, the last of the init order."}
	PBeforeState = &Param{Name: "BeforeState", Domain: ContainerStateDomain, World: true,
		Doc: "The gating container's state."}
	PBeforeGen = &Param{Name: "BeforeGen", Domain: GenDomain, World: true,
		Doc: "The sandbox generation of the gating container's instance."}
	PBeforeStarted = &Param{Name: "BeforeStarted", Domain: BoolDomain, World: true,
		Doc: "The gating container passed its startup probe."}
	PMainSeen = &Param{Name: "MainSeen", Domain: BoolDomain, World: true,
		Doc: "The runtime lists an instance of a regular container, of any sandbox."}
	PRegularsStopped = &Param{Name: "RegularsStopped", Domain: BoolDomain, World: true,
		Doc: "No regular container's instance is created or running."}
	PLaterSidecarsStopped = &Param{Name: "LaterSidecarsStopped", Domain: BoolDomain, World: true,
		Doc: "No sidecar later in the init order is created or running."}
	PPhase = &Param{Name: "Phase", Domain: PodPhaseDomain, World: true,
		Doc: "The pod's phase."}
	PPodNever = &Param{Name: "PodNever", Domain: BoolDomain, World: true,
		Doc: "The pod's restartPolicy is Never."}
	PAnyRan = &Param{Name: "AnyRan", Domain: BoolDomain, World: true,
		Doc: "Some container of the pod has run (the runtime lists an instance)."}
)

// ContainerParams lists the container table's parameters in order.
var ContainerParams = []*Param{PKind, PPolicy, PRule, PCode, PSandbox, PSandboxReady, PTerminating, PFirst,
	PBeforeKind, PBeforeState, PBeforeGen, PBeforeStarted, PMainSeen, PRegularsStopped, PLaterSidecarsStopped,
	PPhase, PPodNever, PAnyRan}

var (
	spec_    = []*Param{PKind, PPolicy, PRule}
	gate     = []*Param{PSandbox, PSandboxReady, PTerminating, PFirst, PBeforeKind, PBeforeState, PBeforeGen, PBeforeStarted, PMainSeen}
	decision = append(append([]*Param{}, spec_...), append(gate, PRegularsStopped, PLaterSidecarsStopped)...)
)

var containerEventInfo = [numContainerEvents]EventInfo{
	CStart:        {Name: "Start", Params: decision, Doc: "create an instance (CreateContainer)"},
	CBegin:        {Name: "Begin", Params: decision, Doc: "start the created instance (StartContainer)"},
	CRestart:      {Name: "Restart", Params: decision, Doc: "restart the exited instance after its back-off"},
	CBackoffDone:  {Name: "BackoffDone", Params: decision, Doc: "the back-off is over: create the next instance"},
	CReplace:      {Name: "Replace", Params: decision, Doc: "create the instance that replaces one killed for a spec change"},
	CStop:         {Name: "Stop", Params: decision, Doc: "kill the instance: the pod terminates"},
	CPurge:        {Name: "Purge", Params: decision, Doc: "remove an instance of a previous sandbox"},
	CExit:         {Name: "Exit", Total: true, Params: []*Param{PCode}, Doc: "the runtime reports the instance exited"},
	CStartupOK:    {Name: "StartupOK", Total: true, Params: []*Param{PKind}, Doc: "the startup probe succeeded"},
	CLivenessFail: {Name: "LivenessFail", Total: true, Params: []*Param{PKind}, Doc: "the liveness probe failed"},
	CRanLong:      {Name: "RanLong", Total: true, Doc: "the instance ran past the back-off reset period"},
	CSpecChange:   {Name: "SpecChange", Total: true, Params: []*Param{PKind}, Doc: "the container's spec changed"},
	CSandboxDied:  {Name: "SandboxDied", Total: true, Doc: "the pod's sandbox died"},
}

// Effects of the container table's rows: the runtime calls the kubelet
// makes (the kill's reason is the row's event).
const (
	// CreateInstance: CreateContainer.
	CreateInstance Effect = 1 << iota
	// StartInstance: StartContainer.
	StartInstance
	// KillInstance: StopContainer, with the row's event as the reason.
	KillInstance
	// WaitBackoff: the container waits in back-off.
	WaitBackoff
	// RemoveInstance: RemoveContainer of a previous sandbox's instance.
	RemoveInstance

	numContainerEffects = iota
)

// ContainerEffectNames lists the container effects in bit order, one name
// per effect (the array's length is their number).
var ContainerEffectNames = [numContainerEffects]string{"CreateInstance", "StartInstance", "KillInstance", "WaitBackoff", "RemoveInstance"}

// ContainerSchema describes the container table (ContainerTable).
var ContainerSchema = &Schema{
	Name:       "ContainerLifecycle",
	StateNames: containerStateNames[:],
	Initial:    NotCreated,
	Events:     containerEventInfo[:],
	Vars:       ContainerVars,
	Params:     ContainerParams,
	Domains:    []*Domain{BoolDomain, ContainerStateDomain, ContainerKindDomain, RestartPolicyDomain, ExitCodeDomain, GenDomain, BackoffDomain, PodPhaseDomain},
	HasRecord:  func(State) bool { return true },
	Shape:      containerShape,
	Effects:    containerEffectErrors,
}

// containerShape: a container row never resets its record.
func containerShape(r *Row) string {
	if r.Reset {
		return "resets a container record: a purge writes what a new sandbox starts with"
	}
	return ""
}

// containerEffectErrors: an effect for each runtime call a row implies.
func containerEffectErrors(r *Row, before, after []int) []string {
	var errs []string
	into := func(s State) bool { return r.From != s && r.To == s }
	check := func(name string, want bool, eff Effect) {
		if want != r.Effects.Has(eff) {
			errs = append(errs, "row "+r.ID+": "+name+" and the effects disagree")
		}
	}
	check("entering Created (CreateInstance)", into(Created), CreateInstance)
	check("Created to Running (StartInstance)", r.From == Created && r.To == CRunning, StartInstance)
	check("entering BackOff (WaitBackoff)", into(BackOff), WaitBackoff)
	check("a previous sandbox's instance removed (RemoveInstance)", after[0] != before[0], RemoveInstance)
	killed := (r.From == CRunning || r.From == Created) && r.To == ExitedFailure && after[VarIndex(CCode)] == ExitCodeDomain.Value("Killed")
	check("a kill (KillInstance)", killed, KillInstance)
	return errs
}
