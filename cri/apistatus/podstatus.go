// Package apistatus generates a pod's API status from the runtime's view
// of it (kubelet: kubelet_pods.go's generateAPIPodStatus and getPhase, and
// pkg/kubelet/status' normalizeStatus): its containers' states, restart
// counts, stop signals and termination messages, its phase by the
// kubelet's rules, the readiness its probes found, its conditions, and the
// cap on its messages' size.
package apistatus

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/podfiles"
	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/cri/volume"
	"github.com/podlife/podlife/kubetypes"
)

// Waiting says why a container that does not run is not running, as the
// kubelet reports it (ContainerCreating, CrashLoopBackOff, ErrImagePull...).
// A sync returns them as data, one per container it could not run.
type Waiting struct{ Container, Reason, Message string }

// Input is what a pod's API status is generated from.
type Input struct {
	Pod     *v1.Pod
	Runtime *cri.PodRuntime
	// SandboxID restricts containers to one sandbox; "" takes the newest
	// instances in any sandbox (the final status of a stopped pod).
	SandboxID string
	PodIP     string
	// Terminal: the pod will not run again; its phase is final.
	Terminal bool
	// Waits are why containers the sync meant to run wait, in the order
	// the sync met them; a later one for a container wins.
	Waits []Waiting
	// RuntimeName prefixes container IDs ("containerd://...").
	RuntimeName string
	// Messages reads exited containers' termination messages.
	Messages podfiles.MessageReader
	// Probes, when set, decide the running containers' started and ready.
	Probes *prober.Manager
	// SupportsRRO: the pod's runtime handler supports recursive read-only
	// mounts (the containers' volumeMounts statuses say which are).
	SupportsRRO bool
}

// waiting is why the named container waits, if the sync said.
func (in Input) waiting(name string) (Waiting, bool) {
	for i := len(in.Waits) - 1; i >= 0; i-- {
		if in.Waits[i].Container == name {
			return in.Waits[i], true
		}
	}
	return Waiting{}, false
}

// Generate is the pod's API status from the runtime's view, with the
// kubelet's phase rules (pkg/kubelet getPhase).
func Generate(in Input) v1.PodStatus {
	st := v1.PodStatus{PodIP: in.PodIP}
	if in.PodIP != "" {
		st.PodIPs = []v1.PodIP{{IP: in.PodIP}}
	}
	if n := len(in.Runtime.Sandboxes); n > 0 {
		t := metav1.NewTime(time.Unix(0, in.Runtime.Sandboxes[n-1].CreatedAt))
		st.StartTime = &t
	}
	// A static pod's phase is never forced terminal, as the kubelet's
	// getPhase leaves it (kubernetes#116484): its containers' restart policy
	// decides, so a stopped Always pod stays Running. Its mirror pod is
	// shared by the manifest's versions under one name: a terminal phase
	// there would stay for good, also once the manifest runs again.
	pin := phaseInput{spec: &in.Pod.Spec, terminal: in.Terminal && !kubetypes.IsStatic(in.Pod),
		initialized: RegularStarted(in.Pod, in.Runtime, in.SandboxID)}
	for i := range in.Pod.Spec.InitContainers {
		c := &in.Pod.Spec.InitContainers[i]
		cs := initContainerStatus(in, c)
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
		if cri.IsSidecar(c) {
			pin.sidecars = append(pin.sidecars, cs)
		} else {
			pin.inits, pin.initSpecs = append(pin.inits, cs), append(pin.initSpecs, c)
		}
	}
	for i := range in.Pod.Spec.Containers {
		c := &in.Pod.Spec.Containers[i]
		cur, prev := in.Runtime.LatestFor(&in.Pod.Spec, in.SandboxID, c)
		st.ContainerStatuses = append(st.ContainerStatuses, containerStatus(in, c, cur, prev))
		pin.containerSpecs = append(pin.containerSpecs, c)
	}
	pin.containers = st.ContainerStatuses
	st.EphemeralContainerStatuses = ephemeralStatuses(in)
	st.Phase = phase(pin)
	in.Probes.Apply(in.Pod, &st)
	st.Conditions = podConditions(in.Pod, &st, pin.initialized, sandboxReady(in))
	capPodMessages(in.Pod, &st)
	return st
}

// sandboxReady reports whether the pod's sandbox is ready: created, with
// its network set up (the kubelet's PodReadyToStartContainers).
func sandboxReady(in Input) bool {
	for _, sb := range in.Runtime.Sandboxes {
		if sb.Id == in.SandboxID {
			return sb.State == runtimeapi.PodSandboxState_SANDBOX_READY
		}
	}
	return false
}

// podConditions are the pod's conditions: PodReadyToStartContainers while
// its sandbox is ready, Initialized once its init containers had their
// turn, ContainersReady and Ready while it runs with its regular containers
// and sidecars all ready (running, and started and ready as their probes
// say).
func podConditions(pod *v1.Pod, st *v1.PodStatus, initialized, sandboxReady bool) []v1.PodCondition {
	ready := prober.PodReady(pod, st)
	return []v1.PodCondition{
		{Type: v1.PodReadyToStartContainers, Status: conditionStatus(sandboxReady)},
		{Type: v1.PodScheduled, Status: v1.ConditionTrue},
		initializedCondition(pod, st.InitContainerStatuses, initialized),
		{Type: v1.ContainersReady, Status: conditionStatus(ready)},
		{Type: v1.PodReady, Status: conditionStatus(ready)},
	}
}

// initializedCondition is True once every regular init container succeeded
// and every sidecar started, or once the regular containers ran in the
// sandbox (the kubelet's GeneratePodInitializedCondition).
func initializedCondition(pod *v1.Pod, statuses []v1.ContainerStatus, initialized bool) v1.PodCondition {
	cond := v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}
	if initialized {
		return cond
	}
	var incomplete []string
	for i := range pod.Spec.InitContainers {
		c, cs := &pod.Spec.InitContainers[i], statuses[i]
		done := cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
		if cri.IsSidecar(c) {
			done = cs.Started != nil && *cs.Started
		}
		if !done {
			incomplete = append(incomplete, c.Name)
		}
	}
	if len(incomplete) > 0 {
		cond.Status = v1.ConditionFalse
		cond.Reason = "ContainersNotInitialized"
		cond.Message = fmt.Sprintf("containers with incomplete status: %v", incomplete)
	}
	return cond
}

func conditionStatus(b bool) v1.ConditionStatus {
	if b {
		return v1.ConditionTrue
	}
	return v1.ConditionFalse
}

// initContainerStatus is the API status of init container c: its instances
// in the sandbox only, since each sandbox initializes the pod anew. A
// regular init container is ready once it succeeded, as in the kubelet; a
// sidecar while it runs.
func initContainerStatus(in Input, c *v1.Container) v1.ContainerStatus {
	cur, prev := in.Runtime.Latest(in.SandboxID, c.Name)
	cs := containerStatus(in, c, cur, prev)
	if !cri.IsSidecar(c) {
		cs.Ready = cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
	}
	return cs
}

// containerStatus is the API status of spec container c, whose newest
// instance is cur and the one before it prev.
func containerStatus(in Input, c *v1.Container, cur, prev *runtimeapi.ContainerStatus) v1.ContainerStatus {
	cs := v1.ContainerStatus{Name: c.Name, Image: c.Image, VolumeMounts: volume.MountStatuses(c, in.SupportsRRO)}
	if prev != nil {
		cs.LastTerminationState = containerState(in, c, prev)
	}
	if cur == nil {
		w, ok := in.waiting(c.Name)
		if !ok {
			w = Waiting{Reason: defaultWaitingReason(in.Pod)}
		}
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
		// Not started, said so: the kubelet's prober manager sets started
		// on every container's status, and clients read it without a nil
		// check (the e2e framework's WaitForPodContainerStarted).
		cs.Started = new(false)
		return cs
	}
	cs.ContainerID = in.RuntimeName + "://" + cur.Id
	// The instance's image, as the runtime names it, not the spec's: after
	// an image change an exited instance still shows what it ran (kubelet:
	// status.Image.Image).
	if img := cur.GetImage().GetImage(); img != "" {
		cs.Image = img
	}
	cs.ImageID = cur.ImageRef
	cs.RestartCount = int32(cur.GetMetadata().GetAttempt())
	started := cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING
	cs.Started = &started
	cs.Ready = started
	cs.StopSignal = statusStopSignal(c, cur)
	cs.State = containerState(in, c, cur)
	if w, ok := in.waiting(c.Name); ok && !in.Terminal {
		switch cur.State {
		case runtimeapi.ContainerState_CONTAINER_EXITED:
			// An exited container waiting for its restart: the last run is
			// the last termination state, as the kubelet shows a crash loop.
			cs.LastTerminationState = cs.State
			cs.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}}
		case runtimeapi.ContainerState_CONTAINER_CREATED:
			// A created container whose start failed (RunContainerError).
			cs.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}}
		}
	}
	return cs
}

// ephemeralStatuses are the API statuses of the pod's ephemeral
// containers (kubelet: its EphemeralContainerStatuses): each one's newest
// instance in any sandbox, since it runs once; never ready, having no
// probes and serving nothing; waiting in ContainerCreating (or why it
// could not start) until it was created. They count in neither the phase
// nor the conditions.
func ephemeralStatuses(in Input) []v1.ContainerStatus {
	var out []v1.ContainerStatus
	for i := range in.Pod.Spec.EphemeralContainers {
		c := (*v1.Container)(&in.Pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		cur, prev := in.Runtime.Latest("", c.Name)
		cs := containerStatus(in, c, cur, prev)
		// Neither ready nor started: the kubelet's prober, which sets
		// them, knows only the regular and init containers.
		cs.Ready, cs.Started = false, nil
		if cur == nil {
			if _, ok := in.waiting(c.Name); !ok {
				cs.State.Waiting.Reason = "ContainerCreating"
			}
		}
		out = append(out, cs)
	}
	return out
}

// defaultWaitingReason is why a container without an instance waits, as the
// kubelet says it: PodInitializing in a pod with init containers.
func defaultWaitingReason(pod *v1.Pod) string {
	if len(pod.Spec.InitContainers) > 0 {
		return "PodInitializing"
	}
	return "ContainerCreating"
}

// containerState converts one runtime status of spec container spec.
func containerState(in Input, spec *v1.Container, c *runtimeapi.ContainerStatus) v1.ContainerState {
	id := in.RuntimeName + "://" + c.Id
	switch c.State {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(0, c.StartedAt))}}
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode:    c.ExitCode,
			Reason:      c.Reason,
			Message:     in.Messages.Message(in.Pod, spec, c),
			StartedAt:   metav1.NewTime(time.Unix(0, c.StartedAt)),
			FinishedAt:  metav1.NewTime(time.Unix(0, c.FinishedAt)),
			ContainerID: id,
		}}
	}
	return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}
}

// Finished reports whether the pod's regular containers completed for good:
// each exited, and is not to run again by its own restartPolicy and rules,
// else the pod's (cri.ContainerShouldRestart). The pod is then terminal by
// itself, as the kubelet's phase is Succeeded or Failed. Sidecars do not
// count: the pod's termination stops them.
func Finished(pod *v1.Pod, rt *cri.PodRuntime, sandboxID string) bool {
	if len(pod.Spec.Containers) == 0 {
		return false
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cur, _ := rt.LatestFor(&pod.Spec, sandboxID, c)
		if cur == nil || cur.State != runtimeapi.ContainerState_CONTAINER_EXITED ||
			cri.ContainerShouldRestart(&pod.Spec, c, cur.ExitCode) {
			return false
		}
	}
	return true
}

// RegularStarted reports whether a regular container of the pod has an
// instance in the sandbox (in any sandbox when sbID is ""): the pod was
// initialized there, and its regular init containers do not run again even
// if their instances were removed. The kubelet, which cannot tell one
// sandbox's containers from another's, counts only created and running
// ones.
func RegularStarted(pod *v1.Pod, p *cri.PodRuntime, sbID string) bool {
	for i := range pod.Spec.Containers {
		if cur, _ := p.Latest(sbID, pod.Spec.Containers[i].Name); cur != nil {
			return true
		}
	}
	return false
}

// maxPodMessages is what all the messages of one pod's statuses may take
// together, shared evenly between its containers (the kubelet's cap, a
// kubecontainer constant).
const maxPodMessages = 12 * 1024

// capPodMessages cuts the terminated messages of the pod's statuses so that
// together they fit maxPodMessages, each to an even share: the kubelet's
// status manager does so (normalizeStatus) before it writes a status.
func capPodMessages(pod *v1.Pod, st *v1.PodStatus) {
	share := maxPodMessages
	if n := len(pod.Spec.Containers) + len(pod.Spec.InitContainers); n > 0 {
		share /= n
	}
	for _, statuses := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range statuses {
			for _, t := range []*v1.ContainerStateTerminated{statuses[i].State.Terminated, statuses[i].LastTerminationState.Terminated} {
				if t != nil && len(t.Message) > share {
					t.Message = t.Message[:share]
				}
			}
		}
	}
}
