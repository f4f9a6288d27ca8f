package apistatus

import v1 "k8s.io/api/core/v1"

// phaseInput is what a pod's phase is computed from: the API statuses of
// its containers, split as the kubelet's getPhase treats them.
type phaseInput struct {
	policy v1.RestartPolicy
	// inits are the regular init containers' statuses, sidecars the
	// restartable init containers', containers the regular containers'.
	inits, sidecars, containers []v1.ContainerStatus
	// initialized: a regular container ran in the sandbox, so sidecars
	// that wait no longer hold the pod Pending.
	initialized bool
	// terminal: the pod will not run again; its phase is final.
	terminal bool
}

// phase follows the kubelet's getPhase: a Never pod whose init container
// failed is Failed; a pod initializing, or with a container never started,
// is Pending; running containers (sidecars included) make it Running;
// otherwise its exited containers and restart policy decide. A terminal pod
// succeeded iff every regular container exited 0, once initialized.
// Sidecars do not count for the completion: termination stops them (the
// kubelet judges a terminal pod once it stopped them).
func phase(in phaseInput) v1.PodPhase {
	pendingInit, failedInit := initProgress(in.inits)
	if failedInit && in.policy == v1.RestartPolicyNever {
		return v1.PodFailed
	}
	runningSidecars, pendingSidecars := sidecarProgress(in.sidecars)
	pending := pendingInit || (pendingSidecars && !in.initialized)
	n := countStates(in.containers)
	if in.terminal {
		if !pending && len(in.containers) > 0 && n.succeeded == len(in.containers) {
			return v1.PodSucceeded
		}
		return v1.PodFailed
	}
	switch {
	case pending || n.waiting > 0:
		return v1.PodPending
	case n.running+runningSidecars > 0:
		return v1.PodRunning
	case n.stopped > 0:
		switch {
		case in.policy == v1.RestartPolicyAlways:
			return v1.PodRunning
		case n.stopped == n.succeeded:
			return v1.PodSucceeded
		case in.policy == v1.RestartPolicyNever:
			return v1.PodFailed
		}
		return v1.PodRunning
	}
	return v1.PodPending
}

// stateCounts counts regular containers by state.
type stateCounts struct {
	running, waiting, stopped, succeeded int
}

func countStates(statuses []v1.ContainerStatus) stateCounts {
	var n stateCounts
	for _, cs := range statuses {
		switch {
		case cs.State.Running != nil:
			n.running++
		case cs.State.Terminated != nil:
			n.stopped++
			if cs.State.Terminated.ExitCode == 0 {
				n.succeeded++
			}
		case cs.LastTerminationState.Terminated != nil:
			n.stopped++ // waiting for a restart
		default:
			n.waiting++
		}
	}
	return n
}

// initProgress tells whether a regular init container has yet to succeed
// (it never ran, or runs), and whether one failed (it exited non-zero, or
// waits for its restart after it did).
func initProgress(statuses []v1.ContainerStatus) (pending, failed bool) {
	for _, cs := range statuses {
		switch {
		case cs.State.Terminated != nil:
			failed = failed || cs.State.Terminated.ExitCode != 0
		case cs.State.Running == nil && cs.LastTerminationState.Terminated != nil:
			failed = failed || cs.LastTerminationState.Terminated.ExitCode != 0
		default:
			pending = true
		}
	}
	return pending, failed
}

// sidecarProgress counts the sidecars that run, and tells whether one never
// started. One that exited, or waits for its restart, counts for neither.
func sidecarProgress(statuses []v1.ContainerStatus) (running int, pending bool) {
	for _, cs := range statuses {
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Waiting != nil && cs.LastTerminationState.Terminated == nil:
			pending = true
		}
	}
	return running, pending
}
