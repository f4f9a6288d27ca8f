package kuberuntime

import (
	"context"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/apistatus"
	"github.com/podlife/podlife/cri/volume"
	"github.com/podlife/podlife/worker"
)

// SyncTerminatingPod stops every container of the pod within gracePeriod
// seconds (the pod's own when nil), stops its sandbox, checks that nothing
// runs any more, and writes the final status with podStatusFn applied. The
// engine cancels ctx when a shorter grace period arrives and calls again
// with it, so a shortened grace takes effect at once.
func (s *Syncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, _ *worker.PodStatus, gracePeriod *int64, podStatusFn func(*v1.PodStatus)) error {
	grace := podGracePeriod(pod)
	if gracePeriod != nil {
		grace = *gracePeriod
	}
	// No probe restarts a terminating pod's container; readiness goes on
	// being probed until the containers stopped.
	s.opts.Probes.PodTerminating(pod.UID)
	p, err := readPod(ctx, s.rt, pod.UID)
	if err != nil {
		return err
	}
	before := s.phaseBeforeKill(pod, p)
	if p, err = s.stopPod(ctx, pod, p, grace, "terminating pod"); err != nil {
		return err
	}
	status := apistatus.Generate(apistatus.Input{Pod: pod, Runtime: p, Terminal: true, RuntimeName: s.opts.RuntimeName, Messages: s.messages(),
		SupportsRRO: s.supportsRRO(ctx, pod)})
	if podStatusFn != nil {
		// The function judges the pod as it was before its kill: node
		// shutdown keeps Succeeded only for a pod that completed by itself,
		// not for one whose containers exited 0 on SIGTERM. A phase it
		// leaves non-terminal becomes the phase of the exit codes.
		after := status.Phase
		status.Phase = before
		podStatusFn(&status)
		if status.Phase != v1.PodSucceeded && status.Phase != v1.PodFailed {
			status.Phase = after
		}
	}
	s.opts.Statuses.SetPodStatus(pod, status)
	s.opts.Probes.RemovePod(pod.UID)
	// A terminating pod starts nothing again: its crash-loop state (and
	// any last start error) must not outlive it or delay its deletion.
	s.backoff.forget(pod.UID)
	s.pulls.Forget(pod.UID)
	s.hooks.forgetPod(pod.UID)
	return nil
}

// phaseBeforeKill is the pod's phase as the runtime shows it before its
// containers are stopped.
func (s *Syncer) phaseBeforeKill(pod *v1.Pod, p *cri.PodRuntime) v1.PodPhase {
	sbID := ""
	if sb := p.ReadySandbox(); sb != nil {
		sbID = sb.Id
	}
	in := apistatus.Input{Pod: pod, Runtime: p, SandboxID: sbID, Terminal: apistatus.Finished(pod, p, sbID), RuntimeName: s.opts.RuntimeName}
	return apistatus.Generate(in).Phase
}

// SyncTerminatingRuntimePod stops a pod known only to the runtime within
// the grace period its containers recorded (recordedGracePeriod), then
// removes it in the background: no record will ever call
// SyncTerminatedPod for it.
func (s *Syncer) SyncTerminatingRuntimePod(ctx context.Context, runningPod *worker.RunningPod) error {
	p, err := readPod(ctx, s.rt, runningPod.ID)
	if err != nil {
		return err
	}
	if p, err = s.stopPod(ctx, nil, p, recordedGracePeriod(p), "runtime pod"); err != nil {
		return err
	}
	s.opts.Probes.RemovePod(runningPod.ID)
	s.removeInBackground(p)
	return nil
}

// SyncTerminatedPod cleans up after a pod whose containers all stopped: it
// stops its sandbox if still up and tears down its volumes (the kubelet's
// SyncTerminatedPod waits for its volume manager to unmount them; a
// failure is retried). The stopped sandbox and the exited containers stay
// until the pod is deleted (RemoveDeadPod), as the kubelet's garbage
// collector keeps them: they are the pod's exit codes, and what tells the
// next agent that the pod already ran.
func (s *Syncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, _ *worker.PodStatus) error {
	p, err := readPod(ctx, s.rt, pod.UID)
	if err != nil {
		return err
	}
	if err := s.stopSandboxes(ctx, p); err != nil {
		return err
	}
	if err := volume.TearDown(s.opts.PodsRoot, pod.UID); err != nil {
		return err
	}
	s.backoff.forget(pod.UID)
	s.pulls.Forget(pod.UID)
	s.hooks.forgetPod(pod.UID)
	s.opts.Probes.RemovePod(pod.UID)
	s.opts.Events.Eventf(pod, v1.EventTypeNormal, "Terminated", "Pod terminated; its containers are kept until it is deleted")
	return nil
}

// recordedGracePeriod is the pod's terminationGracePeriodSeconds as its
// running containers recorded it when they were created
// (cri.GracePeriodAnnotation, the longest if they differ), else
// runtimeOnlyGracePeriod. A runtime-only pod is, most often, a static pod
// whose manifest was removed while the agent was down, or whose stop an
// agent had begun when it was stopped: its owner asked for its graceful
// stop, and an agent's restart must not shorten it. The kubelet kills such
// a pod with a 1 s override (HandlePodCleanups), although its
// killContainer restores the grace period from the same annotation.
func recordedGracePeriod(p *cri.PodRuntime) int64 {
	grace, found := int64(0), false
	for _, c := range p.NotExited() {
		g, err := strconv.ParseInt(c.GetAnnotations()[cri.GracePeriodAnnotation], 10, 64)
		if err != nil || g < 0 {
			continue
		}
		grace, found = max(grace, g), true
	}
	if !found {
		return runtimeOnlyGracePeriod
	}
	return grace
}
