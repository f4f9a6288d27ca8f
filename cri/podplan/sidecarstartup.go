package podplan

import (
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/apistatus"
)

// A sidecar's turn in the pod's initialization ends once it runs and its
// startup probe, if it has one, succeeded: the kubelet's
// computeInitContainerActions waits for the startup probe's success before
// it starts the next init container or the regular containers. planInit
// ends the turn when the sidecar runs; holdForStartup then holds back what
// comes after a sidecar that is not started yet. The agent syncs the pod
// when the startup probe succeeds (a changed probe result), so the next
// container starts at once.

// Started reports whether running container c, instance cur, counts
// as started: its startup probe, if it has one, succeeded.
type Started func(c *v1.Container, cur *runtimeapi.ContainerStatus) bool

// holdForStartup is plan with the container after the init container
// whose turn it is held back while that one is a running sidecar not
// started yet: the next init container is not started, and the pod is not
// initialized. A pod whose regular containers ran in the sandbox was
// initialized there: a sidecar restarted later holds nothing back.
func holdForStartup(pod *v1.Pod, p *cri.PodRuntime, sbID string, plan initPlan, started Started) initPlan {
	inits := pod.Spec.InitContainers
	if len(inits) == 0 || apistatus.RegularStarted(pod, p, sbID) {
		return plan
	}
	turn := initTurn(inits, p, sbID)
	if turn < 0 || !cri.IsSidecar(&inits[turn]) {
		return plan
	}
	cur, _ := p.Latest(sbID, inits[turn].Name)
	if cur.State != runtimeapi.ContainerState_CONTAINER_RUNNING || started(&inits[turn], cur) {
		return plan
	}
	plan.initialized = false
	if turn+1 < len(inits) {
		next := &inits[turn+1]
		kept := plan.start[:0:0]
		for _, c := range plan.start {
			if c != next {
				kept = append(kept, c)
			}
		}
		plan.start = kept
	}
	return plan
}
