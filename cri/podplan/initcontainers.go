package podplan

import (
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/apistatus"
)

// Init containers, as the kubelet runs them (kuberuntime's
// computeInitContainerActions): regular ones one at a time, in order, each
// to a successful exit before the next starts; restartable ones (sidecars,
// restartPolicy Always) in their turn too, but only until they run, and
// then kept running. The regular containers start once every init container
// had its turn. Each sandbox initializes the pod anew.

// initPlan is what one sync does about the pod's init containers.
type initPlan struct {
	// start lists the init containers to create, start or restart, in
	// their order.
	start []*v1.Container
	// initialized: every init container had its turn, so the regular
	// containers may run.
	initialized bool
}

// planInit decides on the init containers of the pod in sandbox sbID. Once
// the pod is initialized, only sidecars that do not run are started again;
// before, the sidecars that already had their turn are, and the init
// container whose turn it is is started, or waited for. A regular init
// container that failed is restarted if its restart policy and rules, else
// the pod's policy, say so (else initFailed ends the pod).
func planInit(pod *v1.Pod, p *cri.PodRuntime, sbID string) initPlan {
	inits := pod.Spec.InitContainers
	if len(inits) == 0 || apistatus.RegularStarted(pod, p, sbID) {
		return initPlan{start: sidecarsToRun(inits, p, sbID, len(inits)), initialized: true}
	}
	turn := initTurn(inits, p, sbID)
	if turn < 0 {
		return initPlan{start: []*v1.Container{&inits[0]}}
	}
	plan := initPlan{start: sidecarsToRun(inits, p, sbID, turn)}
	c := &inits[turn]
	cur, _ := p.Latest(sbID, c.Name)
	switch {
	case !turnDone(c, cur):
		if needsStart(&pod.Spec, c, cur) {
			plan.start = append(plan.start, c)
		}
	case turn == len(inits)-1:
		plan.initialized = true
	default:
		plan.start = append(plan.start, &inits[turn+1])
	}
	return plan
}

// initTurn is the index of the last init container with an instance in the
// sandbox, whose turn it is (or was): the ones before it had theirs. It is
// -1 when none has an instance.
func initTurn(inits []v1.Container, p *cri.PodRuntime, sbID string) int {
	for i := len(inits) - 1; i >= 0; i-- {
		if cur, _ := p.Latest(sbID, inits[i].Name); cur != nil {
			return i
		}
	}
	return -1
}

// turnDone reports whether init container c, whose newest instance is cur,
// lets the next one start: a regular one once it exited 0, a sidecar once
// it runs.
func turnDone(c *v1.Container, cur *runtimeapi.ContainerStatus) bool {
	if cri.IsSidecar(c) {
		return cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING
	}
	return cur.State == runtimeapi.ContainerState_CONTAINER_EXITED && cur.ExitCode == 0
}

// needsStart reports whether init container c, whose turn is not done,
// must be started: a created one (its start failed), a sidecar that exited,
// and a regular init container that failed, if its restart policy and
// rules, else the pod's policy, say so (the kubelet's
// computeInitContainerActions). A regular one that runs is waited for.
func needsStart(spec *v1.PodSpec, c *v1.Container, cur *runtimeapi.ContainerStatus) bool {
	switch cur.State {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return false
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return cri.IsSidecar(c) || cri.ContainerShouldRestart(spec, c, cur.ExitCode)
	}
	return true
}

// sidecarsToRun lists the sidecars among inits[:n] that do not run in the
// sandbox: they had their turn, and are restarted whenever they exit.
func sidecarsToRun(inits []v1.Container, p *cri.PodRuntime, sbID string, n int) []*v1.Container {
	var out []*v1.Container
	for i := range inits[:n] {
		c := &inits[i]
		if !cri.IsSidecar(c) {
			continue
		}
		if cur, _ := p.Latest(sbID, c.Name); cur == nil || cur.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			out = append(out, c)
		}
	}
	return out
}

// initFailed reports whether a regular init container failed in the
// sandbox and is not to restart (its own restart policy and rules, else the
// pod's Never): the pod is over, Failed.
func initFailed(pod *v1.Pod, p *cri.PodRuntime, sbID string) bool {
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if cri.IsSidecar(c) {
			continue
		}
		cur, _ := p.Latest(sbID, c.Name)
		if cur != nil && cur.State == runtimeapi.ContainerState_CONTAINER_EXITED && cur.ExitCode != 0 &&
			!cri.ContainerShouldRestart(&pod.Spec, c, cur.ExitCode) {
			return true
		}
	}
	return false
}
