package apistatus

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri"
)

// phaseInput is what a pod's phase is computed from: the API statuses of
// its containers, split as the kubelet's getPhase treats them.
type phaseInput struct {
	// spec holds the pod's restart policy; nil is Always.
	spec *v1.PodSpec
	// inits are the regular init containers' statuses, sidecars the
	// restartable init containers', containers the regular containers'.
	inits, sidecars, containers []v1.ContainerStatus
	// initSpecs and containerSpecs are the specs of inits and containers,
	// index for index: their restartPolicy and restartPolicyRules say
	// whether an exited one runs again. Missing or nil entries follow the
	// pod's policy alone.
	initSpecs, containerSpecs []*v1.Container
	// initialized: a regular container ran in the sandbox, so sidecars
	// that wait no longer hold the pod Pending.
	initialized bool
	// terminal: the pod will not run again; its phase is final.
	terminal bool
}

// restarts reports whether the i-th of specs, exited with exitCode, runs
// again (cri.ContainerShouldRestart).
func (in phaseInput) restarts(specs []*v1.Container, i int, exitCode int32) bool {
	spec := in.spec
	if spec == nil {
		spec = &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways}
	}
	c := &v1.Container{}
	if i < len(specs) && specs[i] != nil {
		c = specs[i]
	}
	return cri.ContainerShouldRestart(spec, c, exitCode)
}

// phase follows the kubelet's getPhase with the ContainerRestartRules
// feature (on by default since Kubernetes 1.35): a failed init container
// that does not restart makes the pod Failed; a pod initializing, or with
// a container never started, is Pending; running containers (sidecars
// included) make it Running; otherwise its exited containers decide: one
// that restarts (its own restartPolicy and rules, else the pod's) keeps it
// Running, else it Succeeded if all exited 0, else Failed. A terminal pod
// succeeded iff every regular container exited 0, once initialized.
// Sidecars do not count for the completion: termination stops them (the
// kubelet judges a terminal pod once it stopped them).
func phase(in phaseInput) v1.PodPhase {
	pendingInit, failedInit := initProgress(in)
	if failedInit {
		return v1.PodFailed
	}
	runningSidecars, pendingSidecars := sidecarProgress(in.sidecars)
	pending := pendingInit || (pendingSidecars && !in.initialized)
	n := countStates(in)
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
		case n.stopped != n.done:
			return v1.PodRunning // one restarts
		case n.stopped == n.succeeded:
			return v1.PodSucceeded
		}
		return v1.PodFailed
	}
	return v1.PodPending
}

// stateCounts counts regular containers by state; done counts the
// stopped ones that do not restart.
type stateCounts struct {
	running, waiting, stopped, succeeded, done int
}

func countStates(in phaseInput) stateCounts {
	var n stateCounts
	for i, cs := range in.containers {
		switch {
		case cs.State.Running != nil:
			n.running++
		case cs.State.Terminated != nil:
			n.stopped++
			if cs.State.Terminated.ExitCode == 0 {
				n.succeeded++
			}
			if !in.restarts(in.containerSpecs, i, cs.State.Terminated.ExitCode) {
				n.done++
			}
		case cs.LastTerminationState.Terminated != nil:
			n.stopped++ // waiting for a restart
			if !in.restarts(in.containerSpecs, i, cs.LastTerminationState.Terminated.ExitCode) {
				n.done++
			}
		default:
			n.waiting++
		}
	}
	return n
}

// initProgress tells whether a regular init container has yet to succeed
// (it never ran, or runs), and whether one failed for good (it exited
// non-zero, or waits after it did, and is not to restart).
func initProgress(in phaseInput) (pending, failed bool) {
	for i, cs := range in.inits {
		switch {
		case cs.State.Terminated != nil:
			code := cs.State.Terminated.ExitCode
			failed = failed || (code != 0 && !in.restarts(in.initSpecs, i, code))
		case cs.State.Running == nil && cs.LastTerminationState.Terminated != nil:
			code := cs.LastTerminationState.Terminated.ExitCode
			failed = failed || (code != 0 && !in.restarts(in.initSpecs, i, code))
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
