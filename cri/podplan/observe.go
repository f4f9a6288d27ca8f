package podplan

import (
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/apistatus"
	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/fsm/container"
)

// What the container table (fsm/container) sees of one container: observe
// maps the runtime view to the state, record and parameters its guards
// read. Only whether an instance is of the sandbox the containers run in
// matters, so the generations are two.
const (
	previousGen = 0
	currentGen  = 1
)

// observed is one container as the table sees it, with the runtime facts
// its course turns into observation events.
type observed struct {
	spec   *v1.Container
	state  container.State
	vars   container.Vars
	params container.Params
	// cur is the instance the state is of; nil when there is none, or when
	// the state is inferred (an init container of an initialized sandbox
	// whose instance was removed).
	cur *runtimeapi.ContainerStatus
	// failed: a probe of kind probe condemns the running instance.
	failed bool
	probe  prober.Kind
	// specChanged: the running instance was created from another spec.
	specChanged bool
}

// observePod observes the pod's containers in sandbox sbID, in the order
// their actions are applied: the init containers and sidecars, the
// regular containers, the ephemeral containers.
func (in *Input) observePod(sbID string) []observed {
	spec := &in.Pod.Spec
	regularsRan := apistatus.RegularStarted(in.Pod, in.View, sbID)
	obs := make([]observed, 0, len(spec.InitContainers)+len(spec.Containers)+len(spec.EphemeralContainers))
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		kind := container.ContainerKindInit
		if cri.IsSidecar(c) {
			kind = container.ContainerKindSidecar
		}
		obs = append(obs, in.observe(sbID, c, kind, regularsRan))
	}
	for i := range spec.Containers {
		obs = append(obs, in.observe(sbID, &spec.Containers[i], container.ContainerKindRegular, regularsRan))
	}
	for i := range spec.EphemeralContainers {
		c := (*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon)
		obs = append(obs, in.observe(sbID, c, container.ContainerKindEphemeral, regularsRan))
	}
	startedBefore(obs, len(spec.InitContainers), regularsRan)
	in.observeWorld(obs, len(spec.InitContainers))
	return obs
}

// startedBefore sets Started for the sidecars of the sandbox that a
// container after them in the init order, or a regular container, ran
// behind: the kubelet let it start, so they had passed their startup
// probe then. The table's Started stays set for the sandbox (the kubelet's
// podHasInitialized: a sidecar's restart does not hold back the regular
// containers again), even when the running instance's startup probe
// failed; the runtime's probe results are of that instance only.
func startedBefore(obs []observed, nInit int, regularsRan bool) {
	later := regularsRan
	for i := nInit - 1; i >= 0; i-- {
		o := &obs[i]
		if later && o.params.Kind == container.ContainerKindSidecar && o.vars.Gen == currentGen {
			o.vars.Started = true
		}
		if o.vars.Gen == currentGen && o.state != container.NotCreated {
			later = true
		}
	}
}

// observe maps container c's instances to its state and record, and its
// spec to the parameters Kind, Policy and Rule. Its newest instance in the
// sandbox counts; without one, an instance of a previous sandbox is
// observed as stale (Gen previousGen: the table purges it), except where
// the kubelet lets it count in the new sandbox: a regular container that
// completed for good (cri.PodRuntime.LatestFor) and an ephemeral one (it
// runs once per pod). An init container without an instance in a sandbox
// where regular containers ran completed there (its instance was removed:
// the kubelet's podHasInitialized, kubernetes#136969).
func (in *Input) observe(sbID string, c *v1.Container, kind container.ContainerKind, regularsRan bool) observed {
	o := observed{spec: c, vars: container.Vars{Gen: currentGen}}
	o.params.Kind, o.params.Policy, o.params.Rule = kind, policyOf(&in.Pod.Spec, c, kind), hasRestartRule(c)
	cur, _ := in.View.Latest(sbID, c.Name)
	if cur == nil {
		old, _ := in.View.Latest("", c.Name)
		switch {
		case old == nil && kind == container.ContainerKindInit && regularsRan:
			o.state, o.vars.Code = container.ExitedSuccess, container.ExitCodeZero
			return o
		case old == nil:
			o.state = container.NotCreated
			return o
		case kind == container.ContainerKindEphemeral:
		case kind == container.ContainerKindRegular && completedForGood(&in.Pod.Spec, c, old):
		default:
			o.vars.Gen = previousGen
		}
		cur = old
	}
	o.cur = cur
	switch cur.State {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		o.state = container.Created
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		o.state = container.Running
		if o.vars.Gen != currentGen {
			break
		}
		// One whose startup probe failed has not started, whatever an
		// earlier result said.
		o.probe, o.failed = in.FailedProbe(cur.Id)
		probed := kind == container.ContainerKindSidecar || kind == container.ContainerKindRegular
		o.vars.Started = probed && in.Started(c, cur) && !(o.failed && o.probe == prober.Startup)
		o.specChanged = specChanged(cur, c)
	default: // exited, or unknown: the runtime's exit code stands
		o.vars.Code = exitCode(c, cur.ExitCode)
		o.state = container.ExitedFailure
		if o.vars.Code == container.ExitCodeZero {
			o.state = container.ExitedSuccess
		}
	}
	return o
}

// observeWorld fills the pod-level parameters of each container but its
// gate (gate): the pod's facts. The plan decides for a pod that does not
// terminate (SyncTerminatingPod stops one), in the sandbox it runs the
// containers in: the ready one, or the one its first step creates.
func (in *Input) observeWorld(obs []observed, nInit int) {
	var w container.Params
	w.Sandbox, w.SandboxReady = currentGen, true
	w.PodNever, w.AnyRan = runsOnce(in.Pod), len(in.View.Containers) > 0
	w.RegularsStopped = true
	for i := range obs {
		o := &obs[i]
		if o.params.Kind == container.ContainerKindRegular && o.cur != nil {
			w.MainSeen = true
			if o.vars.Gen == currentGen && (o.state == container.Created || o.state == container.Running) {
				w.RegularsStopped = false
			}
		}
	}
	w.Phase = container.PodPhasePending
	for i := range obs {
		o := &obs[i]
		p := w
		p.Kind, p.Policy, p.Rule = o.params.Kind, o.params.Policy, o.params.Rule
		p.LaterSidecarsStopped = true
		for j := i + 1; j < nInit; j++ {
			l := &obs[j]
			if l.params.Kind == container.ContainerKindSidecar && l.vars.Gen == currentGen && (l.state == container.Created || l.state == container.Running) {
				p.LaterSidecarsStopped = false
			}
		}
		o.params = p
	}
}

// gate sets the parameters of obs[i] that say what gates it: the
// container before it in the init order, or, for a regular or ephemeral
// container, the last of the init order, as that one is now (after its own
// course in this sync: one that this sync starts, or kills, is not done).
func gate(obs []observed, now []record, i, nInit int) {
	g := i - 1
	if i >= nInit {
		g = nInit - 1
	}
	p := &obs[i].params
	p.First = g < 0
	if !p.First {
		p.BeforeKind, p.BeforeState, p.BeforeGen, p.BeforeStarted = obs[g].params.Kind, container.ContainerState(now[g].state), now[g].vars.Gen, now[g].vars.Started
	}
}

// record is a container's state and record.
type record struct {
	state container.State
	vars  container.Vars
}

// policyOf is container c's effective restart policy (the table's
// Policy): a sidecar's is Always, an ephemeral container's Never, else its
// own restartPolicy, else the pod's (OnFailure for an init container of an
// Always pod).
func policyOf(spec *v1.PodSpec, c *v1.Container, kind container.ContainerKind) container.RestartPolicy {
	switch {
	case kind == container.ContainerKindSidecar:
		return container.RestartPolicyAlways
	case kind == container.ContainerKindEphemeral:
		return container.RestartPolicyNever
	case c.RestartPolicy != nil:
		switch *c.RestartPolicy {
		case v1.ContainerRestartPolicyAlways:
			return container.RestartPolicyAlways
		case v1.ContainerRestartPolicyOnFailure:
			return container.RestartPolicyOnFailure
		}
		return container.RestartPolicyNever
	}
	switch spec.RestartPolicy {
	case v1.RestartPolicyNever:
		return container.RestartPolicyNever
	case v1.RestartPolicyOnFailure:
		return container.RestartPolicyOnFailure
	}
	if kind == container.ContainerKindInit {
		return container.RestartPolicyOnFailure
	}
	return container.RestartPolicyAlways
}

// hasRestartRule reports whether one of c's restartPolicyRules restarts it
// (rules count only beside a container-level restartPolicy).
func hasRestartRule(c *v1.Container) bool {
	if c.RestartPolicy == nil {
		return false
	}
	for _, r := range c.RestartPolicyRules {
		if r.Action == v1.ContainerRestartRuleActionRestart {
			return true
		}
	}
	return false
}

// exitCode abstracts an exit code as the table does: one a restart rule
// of c matches is Rule (a failure, even 0), else 0 is Zero, any other
// Other.
func exitCode(c *v1.Container, code int32) container.ExitCode {
	if hasRestartRule(c) {
		if r, ok := cri.MatchingRestartRule(c, code); ok && r.Action == v1.ContainerRestartRuleActionRestart {
			return container.ExitCodeRule
		}
	}
	if code == 0 {
		return container.ExitCodeZero
	}
	return container.ExitCodeOther
}

// completedForGood reports whether a regular container's instance exited
// and is not to run again (cri.PodRuntime.LatestFor).
func completedForGood(spec *v1.PodSpec, c *v1.Container, cur *runtimeapi.ContainerStatus) bool {
	return cur.State == runtimeapi.ContainerState_CONTAINER_EXITED && !cri.ContainerShouldRestart(spec, c, cur.ExitCode)
}
