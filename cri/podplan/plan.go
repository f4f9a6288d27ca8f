// Package podplan decides what one sync does to a pod (kubelet:
// pkg/kubelet/kuberuntime's computePodActions and
// computeInitContainerActions): from the pod's spec and one view of the
// runtime, ComputePodActions returns, as data, whether the pod is over,
// the sandbox to create, and each container's action with its reason.
// It calls nothing: cri/kuberuntime's SyncPod applies the plan, so that
// the decisions can be tested row by row and cost less than a CRI call.
package podplan

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/apistatus"
	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/fsm/container"
)

// SyncPod plans, then applies (the kubelet's ComputePodActions and
// SyncPod): ComputePodActions decides everything one sync does from the
// pod's spec and one view of the runtime, and SyncPod carries it out.
// The plan is pure data, so that it can be tested row by row and costs
// less than one CRI call.

// pendingSandbox stands for the sandbox a plan creates: no instance is in
// it, so the containers are planned as in an empty sandbox, and nothing of
// an older sandbox counts as done (kubernetes#137710, #49505). It is not
// "", which Latest and RegularStarted read as "any sandbox".
const pendingSandbox = "\x00pending-sandbox"

// Input is what a plan is computed from: the spec, one runtime view,
// and what the syncer knows besides, read through functions so that the
// plan itself stays free of state (kubelet: computePodActions' pod,
// podStatus and the managers it asks).
type Input struct {
	Pod  *v1.Pod
	View *cri.PodRuntime
	Now  time.Time
	// Started reports whether a running container is past its startup
	// probe.
	Started Started
	// FailedProbe is the kind of the probe whose failure condemns the
	// running container id, if one does.
	FailedProbe func(id string) (prober.Kind, bool)
	// Backoff is how long the named container, which exited at exitedAt,
	// must still wait for its restart; it counts nothing.
	Backoff func(name string, exitedAt time.Time) time.Duration
}

// Started reports whether running container c, instance cur, counts as
// started: its startup probe, if it has one, succeeded (a sidecar's turn
// in the pod's initialization ends then, as in the kubelet's
// computeInitContainerActions).
type Started func(c *v1.Container, cur *runtimeapi.ContainerStatus) bool

// Actions is what one sync does to a pod (kubelet: podActions).
type Actions struct {
	// Terminal: the pod is over and nothing runs again; its status is
	// final. Nothing else in the plan is set but SandboxID and Why.
	Terminal bool
	// Why says why the pod is over, or why a sandbox is created.
	Why string
	// SandboxID is the ready sandbox the containers run in ("" when
	// CreateSandbox, or for a terminal pod without one).
	SandboxID string
	// SandboxAttempt is the attempt of the sandbox the containers run in.
	// CreateSandbox: the pod gets a new sandbox, after KillPrevious, what
	// still runs (or could) of older ones, is stopped.
	CreateSandbox  bool
	SandboxAttempt uint32
	KillPrevious   []*runtimeapi.ContainerStatus
	// Ignored are the IDs of the instances of other sandboxes than the
	// one the containers run in: nothing of them counts for the init
	// containers' turns (the garbage collector removes them).
	Ignored []string
	// Ephemeral, Init and Containers are the actions on the ephemeral
	// containers, the init containers and sidecars, and the regular
	// containers, each in the order they are applied.
	Ephemeral, Init, Containers []ContainerAction
	// Initialized: the init containers had their turns; the regular
	// containers' actions are only planned then.
	Initialized bool
	// Steps are the rows the plan fired, container by container, for the
	// actions it returns (and the purges the garbage collector carries
	// out): what a trace of its decisions records.
	Steps []Step
}

// Then is what a ContainerAction does after its kill, if any.
type Then int

const (
	ThenNothing Then = iota // a kill alone (a Never container's failed probe)
	ThenCreate              // create and start a new instance
	ThenStart               // start the created instance
	ThenRestart             // create a new one, counted as a restart in the back-off
	ThenBackOff             // wait in crash-loop back-off
)

var thenNames = [...]string{"nothing", "create", "start", "restart", "back-off"}

// KillReason says why a running instance is killed.
type KillReason int

const (
	KillSpecChanged KillReason = iota + 1 // replaced: the spec changed (a sidecar's image)
	KillProbeFailed                       // its startup or liveness probe failed
)

// ContainerAction is what a sync does to one container.
type ContainerAction struct {
	Spec *v1.Container
	// Kill, when set, is the instance to kill first, for Why (Probe is the
	// failed probe's kind).
	Kill  *runtimeapi.ContainerStatus
	Why   KillReason
	Probe prober.Kind
	Then  Then
	// Created is the instance ThenStart starts.
	Created *runtimeapi.ContainerStatus
	// ExitedAt is when the instance ThenRestart replaces ended (now, for
	// one killed for its probe).
	ExitedAt time.Time
	// Wait is the status ThenBackOff leaves the container in.
	Wait apistatus.Waiting
	// Rows are the IDs of the container table's rows the container's
	// course fired, in order: the reason for the action (fsm/container).
	Rows []string
}

// String is the action in short, for tests and logs: "kill(probe
// liveness) app, restart".
func (a ContainerAction) String() string {
	var b strings.Builder
	if a.Kill != nil {
		switch a.Why {
		case KillSpecChanged:
			b.WriteString("kill(spec changed) ")
		case KillProbeFailed:
			fmt.Fprintf(&b, "kill(probe %s) ", strings.ToLower(a.Probe.String()))
		}
	}
	b.WriteString(a.Spec.Name)
	if a.Kill == nil || a.Then != ThenNothing {
		b.WriteString(" " + thenNames[a.Then])
	}
	return b.String()
}

// ComputePodActions decides one sync of pod from in's single runtime view
// (kubelet: computePodActions). It changes nothing. Whether a dead
// sandbox is replaced is the table's RecreateSandbox; what happens to each
// container is its course through the container table (course), made
// into an action (fromCourse).
func ComputePodActions(in *Input) Actions {
	pod, view := in.Pod, in.View
	sb := view.ReadySandbox()
	if sb == nil && len(view.Sandboxes) > 0 {
		// The sandbox of a Never pod none of whose containers may restart
		// died after its containers were created: they do not run again.
		// Without a container, the sandbox is retried (kubernetes#79398).
		// Init containers count, as in the kubelet: a Never pod does not
		// initialize twice.
		pod := container.Params{PodNever: runsOnce(pod), AnyRan: len(view.Containers) > 0}
		if !container.RecreateSandbox(container.NotCreated, container.Vars{}, pod) {
			return Actions{Terminal: true, Why: "sandbox died; the pod runs once"}
		}
	}
	switch {
	case sb == nil && len(view.Sandboxes) > 0 && len(view.Containers) > 0 && apistatus.Finished(pod, view, ""):
		return Actions{Terminal: true, Why: "sandbox died; every container completed"}
	case sb != nil && apistatus.Finished(pod, view, sb.Id):
		return Actions{Terminal: true, SandboxID: sb.Id, Why: "every container completed"}
	}
	var a Actions
	sbID := pendingSandbox
	if sb == nil {
		a.CreateSandbox, a.SandboxAttempt, a.KillPrevious = true, view.NextSandboxAttempt(), view.NotExited()
		a.Why = "no sandbox yet"
		if len(view.Sandboxes) > 0 {
			a.Why = fmt.Sprintf("sandbox %s is not ready", view.Sandboxes[0].Id)
		}
	} else {
		sbID, a.SandboxID, a.SandboxAttempt = sb.Id, sb.Id, sb.GetMetadata().GetAttempt()
	}
	for _, c := range view.Containers {
		if view.SandboxOf[c.Id] != sbID {
			a.Ignored = append(a.Ignored, c.Id)
		}
	}
	obs := in.observePod(sbID)
	nInit, nRegular := len(pod.Spec.InitContainers), len(pod.Spec.Containers)
	if sb != nil && initFailed(obs[:nInit]) {
		return Actions{Terminal: true, SandboxID: sb.Id, Why: "an init container failed"}
	}
	courses, now := in.courses(obs, nInit, sb == nil)
	a.Initialized = initialized(obs, now, nInit, nRegular)
	for i, c := range courses {
		act, ok := in.fromCourse(&obs[i], c.trs, c.exitedAt, c.wait)
		if !ok || i < nInit || i >= nInit+nRegular || a.Initialized {
			a.Steps = append(a.Steps, c.trs...)
		}
		switch {
		case !ok:
		case i < nInit:
			a.Init = append(a.Init, act)
		case i >= nInit+nRegular:
			a.Ephemeral = append(a.Ephemeral, act)
		case a.Initialized:
			a.Containers = append(a.Containers, act)
		}
	}
	return a
}

// courseOf is the course of one container in one sync.
type courseOf struct {
	trs      []Step
	exitedAt time.Time
	wait     time.Duration
}

// courses runs each container's course in order, each gated by the one
// before it as that one is after its own (gate). It returns the courses
// and the records they leave. Ephemeral containers belong to the sandbox
// they were added to: a sync that creates a sandbox (noEphemeral) plans
// none, as the kubelet's computePodActions returns before them.
func (in *Input) courses(obs []observed, nInit int, noEphemeral bool) ([]courseOf, []record) {
	out := make([]courseOf, len(obs))
	now := make([]record, len(obs))
	for i := range obs {
		o := &obs[i]
		gate(obs, now, i, nInit)
		now[i] = record{o.state, o.vars}
		if noEphemeral && o.params.Kind == container.ContainerKindEphemeral {
			continue
		}
		c := &out[i]
		c.trs, c.exitedAt, c.wait = in.course(o)
		if n := len(c.trs); n > 0 {
			now[i] = record{c.trs[n-1].To, c.trs[n-1].After}
		}
	}
	return out, now
}

// initialized reports whether the regular containers' gate is open after
// this sync's courses (the generated BeforeDone of the last init
// container, or no init container), or a regular container has an
// instance in the sandbox: it was open there (the kubelet's
// podHasInitialized).
func initialized(obs []observed, now []record, nInit, nRegular int) bool {
	for i := nInit; i < nInit+nRegular; i++ {
		o := &obs[i]
		if o.params.First || container.BeforeDone(now[i].state, now[i].vars, o.params) || (o.cur != nil && o.vars.Gen == currentGen) {
			return true
		}
	}
	return nInit == 0
}

// initFailed reports whether a regular init container failed in the
// sandbox and cannot run again there (the generated MayRunAgain): the pod
// is over, Failed.
func initFailed(inits []observed) bool {
	for _, o := range inits {
		if o.params.Kind == container.ContainerKindInit && o.state == container.ExitedFailure && o.vars.Gen == currentGen &&
			!container.MayRunAgain(o.state, o.vars, o.params) {
			return true
		}
	}
	return false
}
