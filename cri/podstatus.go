package cri

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// waiting says why a container that does not run is not running, as the
// kubelet reports it (ContainerCreating, CrashLoopBackOff, ErrImagePull...).
type waiting struct{ reason, message string }

// statusInput is what a pod's API status is generated from.
type statusInput struct {
	pod *v1.Pod
	rt  *podRuntime
	// sandboxID restricts containers to one sandbox; "" takes the newest
	// instances in any sandbox (the final status of a stopped pod).
	sandboxID string
	podIP     string
	// terminal: the pod will not run again; its phase is final.
	terminal bool
	waits    map[string]waiting
	// runtimeName prefixes container IDs ("containerd://...").
	runtimeName string
}

// generateStatus is the pod's API status from the runtime's view, with the
// kubelet's phase rules (pkg/kubelet getPhase).
func generateStatus(in statusInput) v1.PodStatus {
	st := v1.PodStatus{PodIP: in.podIP}
	if in.podIP != "" {
		st.PodIPs = []v1.PodIP{{IP: in.podIP}}
	}
	if n := len(in.rt.sandboxes); n > 0 {
		t := metav1.NewTime(time.Unix(0, in.rt.sandboxes[n-1].CreatedAt))
		st.StartTime = &t
	}
	ready := true
	for i := range in.pod.Spec.Containers {
		c := &in.pod.Spec.Containers[i]
		cs := containerStatus(in, c)
		ready = ready && cs.Ready
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	st.Phase = phase(in.pod.Spec.RestartPolicy, st.ContainerStatuses, in.terminal)
	ready = ready && st.Phase == v1.PodRunning
	st.Conditions = []v1.PodCondition{
		{Type: v1.PodScheduled, Status: v1.ConditionTrue},
		{Type: v1.PodInitialized, Status: v1.ConditionTrue},
		{Type: v1.ContainersReady, Status: conditionStatus(ready)},
		{Type: v1.PodReady, Status: conditionStatus(ready)},
	}
	return st
}

func conditionStatus(b bool) v1.ConditionStatus {
	if b {
		return v1.ConditionTrue
	}
	return v1.ConditionFalse
}

// containerStatus is the API status of spec container c.
func containerStatus(in statusInput, c *v1.Container) v1.ContainerStatus {
	cur, prev := in.rt.latestFor(in.pod.Spec.RestartPolicy, in.sandboxID, c.Name)
	cs := v1.ContainerStatus{Name: c.Name, Image: c.Image}
	if prev != nil {
		cs.LastTerminationState = containerState(in, prev)
	}
	if cur == nil {
		w, ok := in.waits[c.Name]
		if !ok {
			w = waiting{reason: "ContainerCreating"}
		}
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: w.reason, Message: w.message}
		return cs
	}
	cs.ContainerID = in.runtimeName + "://" + cur.Id
	cs.ImageID = cur.ImageRef
	cs.RestartCount = int32(cur.GetMetadata().GetAttempt())
	started := cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING
	cs.Started = &started
	cs.Ready = started
	cs.State = containerState(in, cur)
	if w, ok := in.waits[c.Name]; ok && !in.terminal {
		switch cur.State {
		case runtimeapi.ContainerState_CONTAINER_EXITED:
			// An exited container waiting for its restart: the last run is
			// the last termination state, as the kubelet shows a crash loop.
			cs.LastTerminationState = cs.State
			cs.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: w.reason, Message: w.message}}
		case runtimeapi.ContainerState_CONTAINER_CREATED:
			// A created container whose start failed (RunContainerError).
			cs.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: w.reason, Message: w.message}}
		}
	}
	return cs
}

// containerState converts one runtime container status.
func containerState(in statusInput, c *runtimeapi.ContainerStatus) v1.ContainerState {
	id := in.runtimeName + "://" + c.Id
	switch c.State {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(0, c.StartedAt))}}
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode:    c.ExitCode,
			Reason:      c.Reason,
			Message:     c.Message,
			StartedAt:   metav1.NewTime(time.Unix(0, c.StartedAt)),
			FinishedAt:  metav1.NewTime(time.Unix(0, c.FinishedAt)),
			ContainerID: id,
		}}
	}
	return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}
}

// phase follows the kubelet's getPhase for pods without init containers:
// a terminal pod succeeded iff every container exited 0; otherwise running
// or restarting containers make it Running, never-started ones Pending.
func phase(policy v1.RestartPolicy, statuses []v1.ContainerStatus, terminal bool) v1.PodPhase {
	var running, waitingN, stopped, succeeded int
	for _, cs := range statuses {
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.LastTerminationState.Terminated != nil:
			stopped++ // waiting for a restart
		default:
			waitingN++
		}
	}
	if terminal {
		if len(statuses) > 0 && succeeded == len(statuses) {
			return v1.PodSucceeded
		}
		return v1.PodFailed
	}
	switch {
	case waitingN > 0:
		return v1.PodPending
	case running > 0:
		return v1.PodRunning
	case stopped > 0:
		switch {
		case policy == v1.RestartPolicyAlways:
			return v1.PodRunning
		case stopped == succeeded:
			return v1.PodSucceeded
		case policy == v1.RestartPolicyNever:
			return v1.PodFailed
		}
		return v1.PodRunning
	}
	return v1.PodPending
}

// finished reports whether the pod's containers completed for good under
// its restart policy: the pod is terminal by itself.
func finished(pod *v1.Pod, rt *podRuntime, sandboxID string) bool {
	if pod.Spec.RestartPolicy == v1.RestartPolicyAlways || len(pod.Spec.Containers) == 0 {
		return false
	}
	for i := range pod.Spec.Containers {
		cur, _ := rt.latestFor(pod.Spec.RestartPolicy, sandboxID, pod.Spec.Containers[i].Name)
		if cur == nil || cur.State != runtimeapi.ContainerState_CONTAINER_EXITED {
			return false
		}
		if pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure && cur.ExitCode != 0 {
			return false
		}
	}
	return true
}

// latestFor is latest(sandboxID, name) as the restart policy sees it: under
// OnFailure a container whose newest instance in any sandbox exited 0
// completed for good, and never runs again, not even in a new sandbox (the
// kubelet's computePodActions); when the sandbox has no instance of it, that
// completed instance counts.
func (p *podRuntime) latestFor(policy v1.RestartPolicy, sandboxID, name string) (current, previous *runtimeapi.ContainerStatus) {
	current, previous = p.latest(sandboxID, name)
	if current != nil || sandboxID == "" || policy != v1.RestartPolicyOnFailure {
		return current, previous
	}
	if c, prev := p.latest("", name); c != nil && c.State == runtimeapi.ContainerState_CONTAINER_EXITED && c.ExitCode == 0 {
		return c, prev
	}
	return nil, nil
}
