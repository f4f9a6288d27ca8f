package container

import "github.com/podlife/podlife/spec"

// The container table's states, events, variables and parameters are
// values of the same types as the pod table's, indexes into Schema.

// The container table's states.
const (
	// NotCreated: no instance of the container exists in the current
	// sandbox (none yet, or the previous sandbox's was purged).
	NotCreated spec.State = iota
	// Created: the runtime created the instance; it has not started.
	Created
	// CRunning: the instance runs.
	Running
	// ExitedSuccess: the instance exited with code 0.
	ExitedSuccess
	// ExitedFailure: the instance exited with another code, or was killed.
	ExitedFailure
	// BackOff: the container is to be restarted and waits for its back-off.
	BackOff

	numStates = iota
)

var stateNames = [numStates]string{"NotCreated", "Created", "Running", "ExitedSuccess", "ExitedFailure", "BackOff"}

// The container table's events: the kubelet's decisions (the first
// seven), then the runtime's observations and the other inputs, which
// every state must answer.
const (
	// CStart: create an instance of the container (CreateContainer).
	Start spec.Event = iota
	// CBegin: start the created instance (StartContainer).
	Begin
	// CRestart: the exited instance is to be restarted: wait for the back-off.
	Restart
	// CBackoffDone: the back-off is over: create the next instance.
	BackoffDone
	// CReplace: create the instance that replaces one killed for a spec change.
	Replace
	// CStop: kill the instance because the pod terminates (or its regular
	// containers are done), in the order sidecars need.
	Stop
	// CPurge: remove an instance of a previous sandbox.
	Purge
	// CExit: the runtime reports that the instance exited.
	Exit
	// CStartupOK: the startup probe succeeded.
	StartupOK
	// CLivenessFail: the liveness probe failed.
	LivenessFail
	// CStartupFail: the startup probe failed past its threshold (the
	// kubelet kills the container as for a failed liveness probe).
	StartupFail
	// CRanLong: the instance ran longer than the back-off reset period.
	RanLong
	// CSpecChange: the container's spec (its image) changed.
	SpecChange
	// CSandboxDied: the pod's sandbox died, and every instance in it.
	SandboxDied

	numEvents = iota
)

// The container table's domains.
var (
	StateDomain = &spec.Domain{Name: "ContainerState", Kind: spec.Enum, Values: stateNames[:]}
	KindDomain  = &spec.Domain{Name: "ContainerKind", Kind: spec.Enum, Values: []string{"Init", "Sidecar", "Regular", "Ephemeral"}}
	// RestartPolicyDomain is a container's effective restart policy: the
	// pod's, a container-level override, Always for a sidecar, OnFailure
	// for an init container of an Always pod, Never for an ephemeral one.
	RestartPolicyDomain = &spec.Domain{Name: "RestartPolicy", Kind: spec.Enum, Values: []string{"Never", "OnFailure", "Always"}}
	// ExitCodeDomain abstracts exit codes: none yet, 0, a code one of the
	// container's restartPolicyRules names (action Restart), any other
	// code, and the kubelet's own kill.
	ExitCodeDomain = &spec.Domain{Name: "ExitCode", Kind: spec.Enum, Values: []string{"None", "Zero", "Rule", "Other", "Killed"}}
	// GenDomain is a sandbox generation; the model checks two (0 and 1).
	GenDomain = &spec.Domain{Name: "Gen", Kind: spec.Int, Min: 0, Max: 2}
	// BackoffDomain is the back-off level; BackoffCap is its cap.
	BackoffDomain  = &spec.Domain{Name: "Backoff", Kind: spec.Int, Min: 0, Max: BackoffCap}
	PodPhaseDomain = &spec.Domain{Name: "PodPhase", Kind: spec.Enum, Values: []string{"Pending", "Running", "Succeeded", "Failed"}}
)

// BackoffCap is the level at which the back-off stops growing (kubelet:
// MaxContainerBackOff, 300 s, reached by doubling from 10 s).
const BackoffCap = 2

// The container record's variables.
var (
	Gen = &spec.Var{Name: "Gen", Domain: GenDomain,
		Doc: "The sandbox generation the instance belongs to."}
	Started = &spec.Var{Name: "Started", Domain: spec.BoolDomain,
		Doc: "The container passed its startup probe in this sandbox (a sidecar counts as started)."}
	Code = &spec.Var{Name: "Code", Domain: ExitCodeDomain,
		Doc: "The exit code of the last instance."}
	BackoffLevel = &spec.Var{Name: "Backoff", Domain: BackoffDomain,
		Doc: "The back-off level: it grows with each restart up to the cap and resets after a long run."}
	Replacing = &spec.Var{Name: "Replacing", Domain: spec.BoolDomain,
		Doc: "The instance was killed for a spec change: the next start replaces it, whatever the restart policy."}
)

// Vars lists the container record's variables in order.
var Vars = []*spec.Var{Gen, Started, Code, BackoffLevel, Replacing}

// The container table's parameters: the container's spec, what the
// runtime reports, and the pod-level facts the model computes from the
// other containers (World).
var (
	PKind = &spec.Param{Name: "Kind", Domain: KindDomain,
		Doc: "The container's kind."}
	PPolicy = &spec.Param{Name: "Policy", Domain: RestartPolicyDomain,
		Doc: "The container's effective restart policy."}
	PRule = &spec.Param{Name: "Rule", Domain: spec.BoolDomain,
		Doc: "The container's restartPolicyRules restart it on the exit code Rule."}
	PCode = &spec.Param{Name: "Code", Domain: ExitCodeDomain,
		Doc: "The exit code the runtime reports."}
	PSandbox = &spec.Param{Name: "Sandbox", Domain: GenDomain, World: true,
		Doc: "The pod's current sandbox generation."}
	PSandboxReady = &spec.Param{Name: "SandboxReady", Domain: spec.BoolDomain, World: true,
		Doc: "The pod's current sandbox is ready."}
	PTerminating = &spec.Param{Name: "Terminating", Domain: spec.BoolDomain, World: true,
		Doc: "The pod terminates: no container may start; running ones are stopped."}
	PFirst = &spec.Param{Name: "First", Domain: spec.BoolDomain, World: true,
		Doc: "Nothing gates the container: it is the first in the init order, or a regular or ephemeral container of a pod with no init containers."}
	PBeforeKind = &spec.Param{Name: "BeforeKind", Domain: KindDomain, World: true,
		Doc: "The kind of the container that gates this one: its predecessor in the init order, or, for a regular or ephemeral container, the last of the init order."}
	PBeforeState = &spec.Param{Name: "BeforeState", Domain: StateDomain, World: true,
		Doc: "The gating container's state."}
	PBeforeGen = &spec.Param{Name: "BeforeGen", Domain: GenDomain, World: true,
		Doc: "The sandbox generation of the gating container's instance."}
	PBeforeStarted = &spec.Param{Name: "BeforeStarted", Domain: spec.BoolDomain, World: true,
		Doc: "The gating container passed its startup probe."}
	PMainSeen = &spec.Param{Name: "MainSeen", Domain: spec.BoolDomain, World: true,
		Doc: "The runtime lists an instance of a regular container, of any sandbox."}
	PRegularsStopped = &spec.Param{Name: "RegularsStopped", Domain: spec.BoolDomain, World: true,
		Doc: "No regular container's instance is created or running."}
	PLaterSidecarsStopped = &spec.Param{Name: "LaterSidecarsStopped", Domain: spec.BoolDomain, World: true,
		Doc: "No sidecar later in the init order is created or running."}
	PPhase = &spec.Param{Name: "Phase", Domain: PodPhaseDomain, World: true,
		Doc: "The pod's phase."}
	PPodNever = &spec.Param{Name: "PodNever", Domain: spec.BoolDomain, World: true,
		Doc: "The pod's restartPolicy is Never."}
	PAnyRan = &spec.Param{Name: "AnyRan", Domain: spec.BoolDomain, World: true,
		Doc: "Some container of the pod has run (the runtime lists an instance)."}
)

// Params lists the container table's parameters in order.
var Params = []*spec.Param{PKind, PPolicy, PRule, PCode, PSandbox, PSandboxReady, PTerminating, PFirst,
	PBeforeKind, PBeforeState, PBeforeGen, PBeforeStarted, PMainSeen, PRegularsStopped, PLaterSidecarsStopped,
	PPhase, PPodNever, PAnyRan}

var (
	spec_    = []*spec.Param{PKind, PPolicy, PRule}
	gate     = []*spec.Param{PSandbox, PSandboxReady, PTerminating, PFirst, PBeforeKind, PBeforeState, PBeforeGen, PBeforeStarted, PMainSeen}
	decision = append(append([]*spec.Param{}, spec_...), append(gate, PRegularsStopped, PLaterSidecarsStopped)...)
)

var eventInfo = [numEvents]spec.EventInfo{
	Start:        {Name: "Start", Params: decision, Doc: "create an instance (CreateContainer)"},
	Begin:        {Name: "Begin", Params: decision, Doc: "start the created instance (StartContainer)"},
	Restart:      {Name: "Restart", Params: decision, Doc: "restart the exited instance after its back-off"},
	BackoffDone:  {Name: "BackoffDone", Params: decision, Doc: "the back-off is over: create the next instance"},
	Replace:      {Name: "Replace", Params: decision, Doc: "create the instance that replaces one killed for a spec change"},
	Stop:         {Name: "Stop", Params: decision, Doc: "kill the instance: the pod terminates"},
	Purge:        {Name: "Purge", Params: decision, Doc: "remove an instance of a previous sandbox"},
	Exit:         {Name: "Exit", Total: true, Params: []*spec.Param{PCode}, Doc: "the runtime reports the instance exited"},
	StartupOK:    {Name: "StartupOK", Total: true, Params: []*spec.Param{PKind}, Doc: "the startup probe succeeded"},
	LivenessFail: {Name: "LivenessFail", Total: true, Params: []*spec.Param{PKind}, Doc: "the liveness probe failed"},
	StartupFail:  {Name: "StartupFail", Total: true, Params: []*spec.Param{PKind}, Doc: "the startup probe failed"},
	RanLong:      {Name: "RanLong", Total: true, Doc: "the instance ran past the back-off reset period"},
	SpecChange:   {Name: "SpecChange", Total: true, Params: []*spec.Param{PKind}, Doc: "the container's spec changed"},
	SandboxDied:  {Name: "SandboxDied", Total: true, Doc: "the pod's sandbox died"},
}

// Effects of the container table's rows: the runtime calls the kubelet
// makes (the kill's reason is the row's event).
const (
	// CreateInstance: CreateContainer.
	CreateInstance spec.Effect = 1 << iota
	// StartInstance: StartContainer.
	StartInstance
	// KillInstance: StopContainer, with the row's event as the reason.
	KillInstance
	// WaitBackoff: the container waits in back-off.
	WaitBackoff
	// RemoveInstance: RemoveContainer of a previous sandbox's instance.
	RemoveInstance

	numEffects = iota
)

// ContainerEffectNames lists the container effects in bit order, one name
// per effect (the array's length is their number).
var EffectNames = [numEffects]string{"CreateInstance", "StartInstance", "KillInstance", "WaitBackoff", "RemoveInstance"}

// Schema describes the container table (Table).
var Schema = &spec.Schema{
	Name:       "ContainerLifecycle",
	StateNames: stateNames[:],
	Initial:    NotCreated,
	Events:     eventInfo[:],
	Vars:       Vars,
	Params:     Params,
	Domains:    []*spec.Domain{spec.BoolDomain, StateDomain, KindDomain, RestartPolicyDomain, ExitCodeDomain, GenDomain, BackoffDomain, PodPhaseDomain},
	HasRecord:  func(spec.State) bool { return true },
	Shape:      shape,
	Effects:    effectErrors,
}

// containerShape: a container row never resets its record.
func shape(r *spec.Row) string {
	if r.Reset {
		return "resets a container record: a purge writes what a new sandbox starts with"
	}
	return ""
}

// containerEffectErrors: an effect for each runtime call a row implies.
func effectErrors(r *spec.Row, before, after []int) []string {
	var errs []string
	into := func(s spec.State) bool { return r.From != s && r.To == s }
	check := func(name string, want bool, eff spec.Effect) {
		if want != r.Effects.Has(eff) {
			errs = append(errs, "row "+r.ID+": "+name+" and the effects disagree")
		}
	}
	check("entering Created (CreateInstance)", into(Created), CreateInstance)
	check("Created to Running (StartInstance)", r.From == Created && r.To == Running, StartInstance)
	check("entering BackOff (WaitBackoff)", into(BackOff), WaitBackoff)
	check("a previous sandbox's instance removed (RemoveInstance)", after[0] != before[0], RemoveInstance)
	killed := (r.From == Running || r.From == Created) && r.To == ExitedFailure && after[spec.VarIndex(Code)] == ExitCodeDomain.Value("Killed")
	check("a kill (KillInstance)", killed, KillInstance)
	return errs
}

func init() { spec.RegisterSchema(Schema) }
