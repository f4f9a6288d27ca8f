package kuberuntime

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/apistatus"
)

// The pod's active deadline (spec.activeDeadlineSeconds), as the kubelet's
// activeDeadlineHandler enforces it: a pod active on the node longer than
// the deadline is ended, Failed with reason DeadlineExceeded. SyncPod
// reports such a pod terminal, so the engine terminates it, and the final
// status keeps the reason. The agent asks for a sync when the deadline
// passes (see agent's housekeeping), as the kubelet's sync loop does.

// The kubelet's status reason and message (and event) for a pod past its
// active deadline.
const (
	DeadlineExceededReason  = "DeadlineExceeded"
	DeadlineExceededMessage = "Pod was active on the node longer than the specified deadline"
)

// PastActiveDeadline reports whether pod, which became active on the node
// at start, is past its active deadline at now. A zero start (the pod
// never became active) is never past it.
func PastActiveDeadline(pod *v1.Pod, start, now time.Time) bool {
	d := pod.Spec.ActiveDeadlineSeconds
	if d == nil || start.IsZero() {
		return false
	}
	return now.Sub(start) >= time.Duration(*d)*time.Second
}

// activeSince is when the pod became active on the node: the status's
// start time when the pod carries one (it survives the sandboxes), else
// the creation of its oldest sandbox; zero when neither is known.
func activeSince(pod *v1.Pod, p *cri.PodRuntime) time.Time {
	var t time.Time
	if st := pod.Status.StartTime; st != nil {
		t = st.Time
	}
	for _, sb := range p.Sandboxes {
		if c := time.Unix(0, sb.CreatedAt); sb.CreatedAt > 0 && (t.IsZero() || c.Before(t)) {
			t = c
		}
	}
	return t
}

// pastDeadline reports whether the pod, whose runtime view is p, is past
// its active deadline now.
func (s *Syncer) pastDeadline(pod *v1.Pod, p *cri.PodRuntime) bool {
	return PastActiveDeadline(pod, activeSince(pod, p), s.opts.Clock.Now())
}

// deadlineExceeded marks st as the status of a pod ended for its active
// deadline.
func deadlineExceeded(st *v1.PodStatus) {
	st.Phase = v1.PodFailed
	st.Reason = DeadlineExceededReason
	st.Message = DeadlineExceededMessage
}

// endForDeadline records that the pod is past its active deadline, with
// the kubelet's event, and writes its status, Failed: SyncPod then reports
// it terminal and the engine stops it.
func (s *Syncer) endForDeadline(pod *v1.Pod, p *cri.PodRuntime, sbID string) {
	s.opts.Events.Eventf(pod, v1.EventTypeNormal, DeadlineExceededReason, "%s", DeadlineExceededMessage)
	in := apistatus.Input{Pod: pod, Runtime: p, SandboxID: sbID, Terminal: true, RuntimeName: s.opts.RuntimeName, Messages: s.messages(), Probes: s.opts.Probes}
	if sbID != "" {
		in.PodIP = s.podIP(sbID)
	}
	st := apistatus.Generate(in)
	deadlineExceeded(&st)
	s.opts.Statuses.SetPodStatus(pod, st)
}
