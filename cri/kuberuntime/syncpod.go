package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/apistatus"
	"github.com/podlife/podlife/cri/events"
	"github.com/podlife/podlife/cri/podplan"
	"github.com/podlife/podlife/cri/volume"
	"github.com/podlife/podlife/worker"
)

// ErrCrashLoopBackOff is returned (wrapped) by SyncPod while a container
// waits to be restarted, so the engine retries after its back-off period.
var ErrCrashLoopBackOff = errors.New("back-off restarting failed container")

// ErrImagePullBackOff is returned (wrapped) by SyncPod while a container's
// image waits for its next pull after a failed one.
var ErrImagePullBackOff = errors.New("back-off pulling image")

// SyncPod creates the pod's sandbox and containers, runs its init
// containers in turn and then its regular containers, restarts exited ones
// as the restart policy says (with a crash-loop back-off), and reports
// isTerminal once a Never or OnFailure pod completed, or a Never pod's init
// container failed. It starts nothing once ctx is cancelled: the engine
// cancels it when termination is requested. It reads the runtime once,
// plans from that view (podplan.ComputePodActions) and applies the plan
// in numbered steps; the status it writes comes from that view, read
// again only when the sync changed something.
func (s *Syncer) SyncPod(ctx context.Context, _ worker.UpdateType, pod, _ *v1.Pod, _ *worker.PodStatus) (bool, error) {
	// Step 1: one view of the runtime, and the plan made from it.
	view, err := readPod(ctx, s.rt, pod.UID)
	if err != nil {
		return false, err
	}
	plan := podplan.ComputePodActions(s.planInput(pod, view))
	if s.opts.Decided != nil {
		s.opts.Decided(pod, plan.Steps)
	}
	// Step 2: a pod that is over keeps what it has.
	if plan.Terminal {
		s.setStatus(pod, view, plan.SandboxID, true, nil)
		return true, nil
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	// Step 3: a pod this node cannot run as asked, and its volumes.
	if reason := s.podRefusal(pod); reason != nil {
		return false, s.refusePod(pod, view, plan.SandboxID, reason)
	}
	vols, err := s.volumes(ctx, pod)
	if err != nil {
		// A sync the termination cancelled reports no failed mount, as the
		// kubelet's, whose wait for the volumes was interrupted: the pod
		// is not waiting for its volumes any more.
		if ctxErr := ctx.Err(); ctxErr != nil {
			return false, ctxErr
		}
		s.failedMount(pod, view, plan.SandboxID, err)
		return false, err
	}
	// Step 4: the sandbox, created after the previous one's containers
	// stopped.
	sbConfig, sbID, err := s.ensureSandbox(ctx, pod, view, &plan)
	if err != nil {
		s.opts.Events.Eventf(pod, v1.EventTypeWarning, events.FailedCreatePodSandBox, "%s", events.FailedCreateSandbox(err))
		// The pod still gets a status (scheduled, pending, its containers
		// creating), as the kubelet's, which writes it before the sandbox.
		s.setStatus(pod, view, sbID, false, nil)
		return false, fmt.Errorf("create sandbox of pod %s/%s (%s): %w", pod.Namespace, pod.Name, pod.UID, err)
	}
	// Steps 5 to 7: the ephemeral containers, the init containers and
	// sidecars, the regular containers.
	ps := &podSync{pod: pod, rt: view, sbID: sbID, sbConfig: sbConfig, vols: vols}
	res, err := s.applyContainers(ctx, ps, &plan)
	if err != nil {
		return false, err
	}
	// Step 8: the status, with why the containers that did not run wait.
	if plan.CreateSandbox || res.acted {
		if view, err = readPod(ctx, s.rt, pod.UID); err != nil {
			return false, errors.Join(append(res.errs, err)...)
		}
	}
	s.setStatus(pod, view, sbID, false, res.waits)
	return false, errors.Join(res.errs...)
}

// planInput is what the plan reads for pod: view, and the syncer's probe
// results and crash-loop back-off as of now.
func (s *Syncer) planInput(pod *v1.Pod, view *cri.PodRuntime) *podplan.Input {
	return &podplan.Input{
		Pod: pod, View: view, Now: s.opts.Clock.Now(), Started: s.started, FailedProbe: s.failedKind,
		Backoff: func(name string, exitedAt time.Time) time.Duration { return s.backoff.wait(pod.UID, name, exitedAt) },
	}
}

// podSync is what applying one plan works with: the pod, the runtime's
// view the plan was made from, and the sandbox its containers go in.
type podSync struct {
	pod      *v1.Pod
	rt       *cri.PodRuntime
	sbID     string
	sbConfig *runtimeapi.PodSandboxConfig
	// ips are the sandbox's IPs once asked (sandboxIPs).
	ips []string
	// vols are the pod's volumes, set up on the node (volume.SetUp).
	vols map[string]volume.Volume
}

// ensureSandbox returns the pod's ready sandbox, or creates the one the
// plan asks for. Containers left in older sandboxes are stopped first: a
// pod runs in one sandbox at a time. Its errors are as the kubelet's
// FailedCreatePodSandBox event shows them: the config's or the runtime's
// own, not wrapped.
func (s *Syncer) ensureSandbox(ctx context.Context, pod *v1.Pod, view *cri.PodRuntime, plan *podplan.Actions) (*runtimeapi.PodSandboxConfig, string, error) {
	cfg, err := sandboxConfig(pod, plan.SandboxAttempt, s.opts.LogRoot)
	if err != nil || !plan.CreateSandbox {
		return cfg, plan.SandboxID, err
	}
	// The runtime class is resolved first: a pod whose class is missing
	// keeps what it has (the kubelet fails the sandbox's creation alike).
	handler, err := s.runtimeHandler(ctx, pod)
	if err != nil {
		return nil, "", err
	}
	if err := s.killContainers(ctx, pod, view, plan.KillPrevious, podGracePeriod(pod)); err != nil {
		return nil, "", err
	}
	if err := ensureDir(cfg.LogDirectory); err != nil {
		return nil, "", err
	}
	if err := s.setDNS(pod, cfg); err != nil {
		return nil, "", err
	}
	id, err := s.rt.RunPodSandbox(ctx, cfg, handler)
	if err != nil {
		return nil, "", err
	}
	if plan.SandboxAttempt > 0 {
		s.opts.Events.Eventf(pod, v1.EventTypeNormal, events.SandboxChanged, "%s", events.SandboxChangedMessage)
	}
	return cfg, id, nil
}

// setStatus generates and writes the pod's status.
func (s *Syncer) setStatus(pod *v1.Pod, p *cri.PodRuntime, sbID string, terminal bool, waits []apistatus.Waiting) {
	in := apistatus.Input{Pod: pod, Runtime: p, SandboxID: sbID, Terminal: terminal, Waits: waits, RuntimeName: s.opts.RuntimeName, Messages: s.messages(), Probes: s.opts.Probes,
		SupportsRRO: s.supportsRRO(context.Background(), pod)}
	if sbID != "" {
		in.PodIP = s.podIP(sbID)
	}
	s.opts.Probes.UpdatePod(pod, running(p, sbID))
	s.opts.Statuses.SetPodStatus(pod, apistatus.Generate(in))
}

// podIP is the sandbox's IP, or "" when the runtime does not say.
func (s *Syncer) podIP(sbID string) string { return cri.SandboxIP(context.Background(), s.rt, sbID) }
