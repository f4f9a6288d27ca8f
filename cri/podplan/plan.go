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
// (kubelet: computePodActions). It changes nothing.
func ComputePodActions(in *Input) Actions {
	pod, view := in.Pod, in.View
	sb := view.ReadySandbox()
	switch {
	case sb == nil && len(view.Sandboxes) > 0 && len(view.Containers) > 0 && runsOnce(pod):
		// The sandbox of a Never pod none of whose containers may restart
		// died after its containers were created: they do not run again.
		// Without a container, the sandbox is retried (kubernetes#79398).
		// Init containers count, as in the kubelet: a Never pod does not
		// initialize twice.
		return Actions{Terminal: true, Why: "sandbox died; the pod runs once"}
	case sb == nil && len(view.Sandboxes) > 0 && len(view.Containers) > 0 && apistatus.Finished(pod, view, ""):
		return Actions{Terminal: true, Why: "sandbox died; every container completed"}
	case sb != nil && apistatus.Finished(pod, view, sb.Id):
		return Actions{Terminal: true, SandboxID: sb.Id, Why: "every container completed"}
	case sb != nil && initFailed(pod, view, sb.Id):
		return Actions{Terminal: true, SandboxID: sb.Id, Why: "an init container failed"}
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
		// Ephemeral containers belong to the sandbox they were added to: a
		// new sandbox gets none.
		a.Ephemeral = planEphemeral(pod, view)
	}
	for _, c := range view.Containers {
		if view.SandboxOf[c.Id] != sbID {
			a.Ignored = append(a.Ignored, c.Id)
		}
	}
	init := holdForStartup(pod, view, sbID, planInit(pod, view, sbID), in.Started)
	init.start = append(init.start, in.sidecarsToReplace(sbID, init.start)...)
	for _, c := range init.start {
		cur, _ := view.Latest(sbID, c.Name)
		if act, ok := in.planContainer(c, cur, true); ok {
			a.Init = append(a.Init, act)
		}
	}
	a.Initialized = init.initialized
	if !a.Initialized {
		return a
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cur, _ := view.LatestFor(&pod.Spec, sbID, c)
		if act, ok := in.planContainer(c, cur, cur != nil && cri.ContainerShouldRestart(&pod.Spec, c, cur.ExitCode)); ok {
			a.Containers = append(a.Containers, act)
		}
	}
	return a
}

// planContainer decides on container c given cur, its newest instance in
// the sandbox: create it when there is none, start it when only created,
// replace it when its spec changed, kill it when a probe failed, and
// restart it after an exit when restart says so and its crash-loop
// back-off allows. ok is false when nothing is to be done.
func (in *Input) planContainer(c *v1.Container, cur *runtimeapi.ContainerStatus, restart bool) (act ContainerAction, ok bool) {
	act = ContainerAction{Spec: c}
	switch {
	case cur == nil:
		act.Then = ThenCreate
	case cur.State != runtimeapi.ContainerState_CONTAINER_EXITED && specChanged(cur, c):
		act.Kill, act.Why, act.Then = cur, KillSpecChanged, ThenCreate
	case cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING:
		kind, failed := in.FailedProbe(cur.Id)
		if !failed {
			return act, false
		}
		act.Kill, act.Why, act.Probe = cur, KillProbeFailed, kind
		if RestartsUnhealthy(in.Pod, c) {
			in.restartAfter(&act, in.Now)
		}
	case cur.State == runtimeapi.ContainerState_CONTAINER_CREATED:
		act.Then, act.Created = ThenStart, cur
	case !restart:
		return act, false
	default:
		in.restartAfter(&act, time.Unix(0, cur.FinishedAt))
	}
	return act, true
}

// restartAfter plans the restart of a container whose instance ended at
// exitedAt: at once, or after its crash-loop back-off.
func (in *Input) restartAfter(act *ContainerAction, exitedAt time.Time) {
	act.ExitedAt = exitedAt
	wait := in.Backoff(act.Spec.Name, exitedAt)
	if wait <= 0 {
		act.Then = ThenRestart
		return
	}
	act.Then = ThenBackOff
	act.Wait = apistatus.Waiting{Container: act.Spec.Name, Reason: "CrashLoopBackOff",
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", wait.Round(time.Second), act.Spec.Name, in.Pod.Name)}
}

// sidecarsToReplace are the running sidecars, not in planned already,
// whose startup or liveness probe failed, or whose spec (its image: the
// only field of an init container an update may change) changed: they are
// killed and started again, as the kubelet restarts a sidecar whose image
// changed.
func (in *Input) sidecarsToReplace(sbID string, planned []*v1.Container) []*v1.Container {
	var out []*v1.Container
	for i := range in.Pod.Spec.InitContainers {
		c := &in.Pod.Spec.InitContainers[i]
		if !cri.IsSidecar(c) || containsContainer(planned, c) {
			continue
		}
		cur, _ := in.View.Latest(sbID, c.Name)
		if cur == nil || cur.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		if _, failed := in.FailedProbe(cur.Id); failed || specChanged(cur, c) {
			out = append(out, c)
		}
	}
	return out
}

func containsContainer(cs []*v1.Container, c *v1.Container) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// planEphemeral plans the start of the ephemeral containers that have no
// instance in any of the pod's sandboxes: one runs once, never again.
func planEphemeral(pod *v1.Pod, view *cri.PodRuntime) []ContainerAction {
	var out []ContainerAction
	for i := range pod.Spec.EphemeralContainers {
		c := (*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		if cur, _ := view.Latest("", c.Name); cur == nil {
			out = append(out, ContainerAction{Spec: c, Then: ThenCreate})
		}
	}
	return out
}
