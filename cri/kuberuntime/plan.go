package kuberuntime

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

// SyncPod plans, then applies (the kubelet's computePodActions and
// SyncPod): computePodActions decides everything one sync does from the
// pod's spec and one view of the runtime, and SyncPod carries it out.
// The plan is pure data, so that it can be tested row by row and costs
// less than one CRI call.

// pendingSandbox stands for the sandbox a plan creates: no instance is in
// it, so the containers are planned as in an empty sandbox, and nothing of
// an older sandbox counts as done (kubernetes#137710, #49505). It is not
// "", which Latest and RegularStarted read as "any sandbox".
const pendingSandbox = "\x00pending-sandbox"

// planInput is what a plan is computed from: the spec, one runtime view,
// and what the syncer knows besides, read through functions so that the
// plan itself stays free of state (kubelet: computePodActions' pod,
// podStatus and the managers it asks).
type planInput struct {
	pod  *v1.Pod
	view *cri.PodRuntime
	now  time.Time
	// started reports whether a running container is past its startup
	// probe.
	started startedFunc
	// failedProbe is the kind of the probe whose failure condemns the
	// running container id, if one does.
	failedProbe func(id string) (prober.Kind, bool)
	// backoff is how long the named container, which exited at exitedAt,
	// must still wait for its restart; it counts nothing.
	backoff func(name string, exitedAt time.Time) time.Duration
}

// podActions is what one sync does to a pod (kubelet: podActions).
type podActions struct {
	// terminal: the pod is over and nothing runs again; its status is
	// final. Nothing else in the plan is set but sandboxID and why.
	terminal bool
	// why says why the pod is over, or why a sandbox is created.
	why string
	// sandboxID is the ready sandbox the containers run in ("" when
	// createSandbox, or for a terminal pod without one).
	sandboxID string
	// sandboxAttempt is the attempt of the sandbox the containers run in.
	// createSandbox: the pod gets a new sandbox, after killPrevious, what
	// still runs (or could) of older ones, is stopped.
	createSandbox  bool
	sandboxAttempt uint32
	killPrevious   []*runtimeapi.ContainerStatus
	// ignored are the IDs of the instances of other sandboxes than the
	// one the containers run in: nothing of them counts for the init
	// containers' turns (the garbage collector removes them).
	ignored []string
	// ephemeral, init and containers are the actions on the ephemeral
	// containers, the init containers and sidecars, and the regular
	// containers, each in the order they are applied.
	ephemeral, init, containers []containerAction
	// initialized: the init containers had their turns; the regular
	// containers' actions are only planned then.
	initialized bool
}

// then is what a containerAction does after its kill, if any.
type then int

const (
	thenNothing then = iota // a kill alone (a Never container's failed probe)
	thenCreate              // create and start a new instance
	thenStart               // start the created instance
	thenRestart             // create a new one, counted as a restart in the back-off
	thenBackOff             // wait in crash-loop back-off
)

var thenNames = [...]string{"nothing", "create", "start", "restart", "back-off"}

// killReason says why a running instance is killed.
type killReason int

const (
	killSpecChanged killReason = iota + 1 // replaced: the spec changed (a sidecar's image)
	killProbeFailed                       // its startup or liveness probe failed
)

// containerAction is what a sync does to one container.
type containerAction struct {
	spec *v1.Container
	// kill, when set, is the instance to kill first, for why (probe is the
	// failed probe's kind).
	kill  *runtimeapi.ContainerStatus
	why   killReason
	probe prober.Kind
	then  then
	// created is the instance thenStart starts.
	created *runtimeapi.ContainerStatus
	// exitedAt is when the instance thenRestart replaces ended (now, for
	// one killed for its probe).
	exitedAt time.Time
	// wait is the status thenBackOff leaves the container in.
	wait apistatus.Waiting
}

// String is the action in short, for tests and logs: "kill(probe
// liveness) app, restart".
func (a containerAction) String() string {
	var b strings.Builder
	if a.kill != nil {
		switch a.why {
		case killSpecChanged:
			b.WriteString("kill(spec changed) ")
		case killProbeFailed:
			fmt.Fprintf(&b, "kill(probe %s) ", strings.ToLower(a.probe.String()))
		}
	}
	b.WriteString(a.spec.Name)
	if a.kill == nil || a.then != thenNothing {
		b.WriteString(" " + thenNames[a.then])
	}
	return b.String()
}

// computePodActions decides one sync of pod from in's single runtime view
// (kubelet: computePodActions). It changes nothing.
func computePodActions(in *planInput) podActions {
	pod, view := in.pod, in.view
	sb := view.ReadySandbox()
	switch {
	case sb == nil && len(view.Sandboxes) > 0 && len(view.Containers) > 0 && runsOnce(pod):
		// The sandbox of a Never pod none of whose containers may restart
		// died after its containers were created: they do not run again.
		// Without a container, the sandbox is retried (kubernetes#79398).
		// Init containers count, as in the kubelet: a Never pod does not
		// initialize twice.
		return podActions{terminal: true, why: "sandbox died; the pod runs once"}
	case sb == nil && len(view.Sandboxes) > 0 && len(view.Containers) > 0 && apistatus.Finished(pod, view, ""):
		return podActions{terminal: true, why: "sandbox died; every container completed"}
	case sb != nil && apistatus.Finished(pod, view, sb.Id):
		return podActions{terminal: true, sandboxID: sb.Id, why: "every container completed"}
	case sb != nil && initFailed(pod, view, sb.Id):
		return podActions{terminal: true, sandboxID: sb.Id, why: "an init container failed"}
	}
	var a podActions
	sbID := pendingSandbox
	if sb == nil {
		a.createSandbox, a.sandboxAttempt, a.killPrevious = true, view.NextSandboxAttempt(), view.NotExited()
		a.why = "no sandbox yet"
		if len(view.Sandboxes) > 0 {
			a.why = fmt.Sprintf("sandbox %s is not ready", view.Sandboxes[0].Id)
		}
	} else {
		sbID, a.sandboxID, a.sandboxAttempt = sb.Id, sb.Id, sb.GetMetadata().GetAttempt()
		// Ephemeral containers belong to the sandbox they were added to: a
		// new sandbox gets none.
		a.ephemeral = planEphemeral(pod, view)
	}
	for _, c := range view.Containers {
		if view.SandboxOf[c.Id] != sbID {
			a.ignored = append(a.ignored, c.Id)
		}
	}
	init := holdForStartup(pod, view, sbID, planInit(pod, view, sbID), in.started)
	init.start = append(init.start, in.sidecarsToReplace(sbID, init.start)...)
	for _, c := range init.start {
		cur, _ := view.Latest(sbID, c.Name)
		if act, ok := in.planContainer(c, cur, true); ok {
			a.init = append(a.init, act)
		}
	}
	a.initialized = init.initialized
	if !a.initialized {
		return a
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cur, _ := view.LatestFor(&pod.Spec, sbID, c)
		if act, ok := in.planContainer(c, cur, cur != nil && cri.ContainerShouldRestart(&pod.Spec, c, cur.ExitCode)); ok {
			a.containers = append(a.containers, act)
		}
	}
	return a
}

// planContainer decides on container c given cur, its newest instance in
// the sandbox: create it when there is none, start it when only created,
// replace it when its spec changed, kill it when a probe failed, and
// restart it after an exit when restart says so and its crash-loop
// back-off allows. ok is false when nothing is to be done.
func (in *planInput) planContainer(c *v1.Container, cur *runtimeapi.ContainerStatus, restart bool) (act containerAction, ok bool) {
	act = containerAction{spec: c}
	switch {
	case cur == nil:
		act.then = thenCreate
	case cur.State != runtimeapi.ContainerState_CONTAINER_EXITED && specChanged(cur, c):
		act.kill, act.why, act.then = cur, killSpecChanged, thenCreate
	case cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING:
		kind, failed := in.failedProbe(cur.Id)
		if !failed {
			return act, false
		}
		act.kill, act.why, act.probe = cur, killProbeFailed, kind
		if restartsUnhealthy(in.pod, c) {
			in.restartAfter(&act, in.now)
		}
	case cur.State == runtimeapi.ContainerState_CONTAINER_CREATED:
		act.then, act.created = thenStart, cur
	case !restart:
		return act, false
	default:
		in.restartAfter(&act, time.Unix(0, cur.FinishedAt))
	}
	return act, true
}

// restartAfter plans the restart of a container whose instance ended at
// exitedAt: at once, or after its crash-loop back-off.
func (in *planInput) restartAfter(act *containerAction, exitedAt time.Time) {
	act.exitedAt = exitedAt
	wait := in.backoff(act.spec.Name, exitedAt)
	if wait <= 0 {
		act.then = thenRestart
		return
	}
	act.then = thenBackOff
	act.wait = apistatus.Waiting{Container: act.spec.Name, Reason: "CrashLoopBackOff",
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", wait.Round(time.Second), act.spec.Name, in.pod.Name)}
}

// sidecarsToReplace are the running sidecars, not in planned already,
// whose startup or liveness probe failed, or whose spec (its image: the
// only field of an init container an update may change) changed: they are
// killed and started again, as the kubelet restarts a sidecar whose image
// changed.
func (in *planInput) sidecarsToReplace(sbID string, planned []*v1.Container) []*v1.Container {
	var out []*v1.Container
	for i := range in.pod.Spec.InitContainers {
		c := &in.pod.Spec.InitContainers[i]
		if !cri.IsSidecar(c) || containsContainer(planned, c) {
			continue
		}
		cur, _ := in.view.Latest(sbID, c.Name)
		if cur == nil || cur.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		if _, failed := in.failedProbe(cur.Id); failed || specChanged(cur, c) {
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
func planEphemeral(pod *v1.Pod, view *cri.PodRuntime) []containerAction {
	var out []containerAction
	for i := range pod.Spec.EphemeralContainers {
		c := (*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		if cur, _ := view.Latest("", c.Name); cur == nil {
			out = append(out, containerAction{spec: c, then: thenCreate})
		}
	}
	return out
}
