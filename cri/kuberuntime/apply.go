package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/apistatus"
	"github.com/podlife/podlife/cri/events"
	"github.com/podlife/podlife/cri/lifecycle"
	"github.com/podlife/podlife/cri/logs"
	"github.com/podlife/podlife/cri/podplan"
	"github.com/podlife/podlife/cri/qos"
)

// The apply half of SyncPod: each podplan.ContainerAction becomes its CRI
// calls. Why a container that was to run does not is returned in its
// error (waitingError), and gathered into the sync's result: no step
// writes it anywhere else.

// syncResult is what applying a plan's container actions did.
type syncResult struct {
	// waits are why containers the plan meant to run wait, in order.
	waits []apistatus.Waiting
	// errs are the actions' errors.
	errs []error
	// acted: an action reached the runtime (or tried to).
	acted bool
}

// waitingError is an action's error that leaves its container waiting
// for Reason (its status shows it).
type waitingError struct {
	w   apistatus.Waiting
	err error
}

func (e *waitingError) Error() string { return e.err.Error() }
func (e *waitingError) Unwrap() error { return e.err }

// waiting is err, leaving container c waiting for reason.
func waiting(c *v1.Container, reason, message string, err error) error {
	return &waitingError{w: apistatus.Waiting{Container: c.Name, Reason: reason, Message: message}, err: err}
}

// add records an action's error, and why its container waits.
func (r *syncResult) add(err error) {
	if err == nil {
		return
	}
	r.errs = append(r.errs, err)
	var we *waitingError
	if errors.As(err, &we) {
		r.waits = append(r.waits, we.w)
	}
}

// applyContainers applies the plan's ephemeral, init and regular
// container actions in turn (the regular ones once the pod is
// initialized). It returns ctx's error alone once it is cancelled.
func (s *Syncer) applyContainers(ctx context.Context, ps *podSync, plan *podplan.Actions) (syncResult, error) {
	if err := ctx.Err(); err != nil {
		return syncResult{}, err
	}
	var res syncResult
	steps := [][]podplan.ContainerAction{plan.Ephemeral, plan.Init}
	if plan.Initialized {
		steps = append(steps, plan.Containers)
	}
	for _, step := range steps {
		for i := range step {
			res.acted = true
			res.add(s.applyContainer(ctx, ps, &step[i]))
			if err := ctx.Err(); err != nil {
				return syncResult{}, err
			}
		}
	}
	return res, nil
}

// applyContainer carries out one container's action: the kill first, if
// any, then the start, the creation or the back-off.
func (s *Syncer) applyContainer(ctx context.Context, ps *podSync, a *podplan.ContainerAction) error {
	c := a.Spec
	s.opts.Logger.Debug("container action", "pod", ps.pod.Namespace+"/"+ps.pod.Name, "container", c.Name, "action", a.String(), "rows", a.Rows)
	switch a.Why {
	case podplan.KillSpecChanged:
		if err := s.replace(ctx, ps, c, a.Kill); err != nil {
			return err
		}
	case podplan.KillProbeFailed:
		if err := s.killUnhealthy(ctx, ps, c, a.Kill, a.Probe, a.Then != podplan.ThenNothing); err != nil {
			return err
		}
	}
	switch a.Then {
	case podplan.ThenStart:
		return s.start(ctx, ps, c, a.Created.Id, a.Created.GetMetadata().GetAttempt())
	case podplan.ThenBackOff:
		return s.backOff(ps.pod, a.Wait)
	case podplan.ThenRestart:
		// Counts the restart. The plan found the back-off over; time only
		// shortens it, and only this pod's syncs, which never overlap,
		// change it: restart answers 0 as well.
		s.backoff.restart(ps.pod.UID, c.Name, a.ExitedAt)
		return s.create(ctx, ps, c)
	case podplan.ThenCreate:
		return s.create(ctx, ps, c)
	}
	return nil
}

// backOff reports a container waiting in crash-loop back-off: a BackOff
// event, and ErrCrashLoopBackOff (wrapped) so that the engine retries.
func (s *Syncer) backOff(pod *v1.Pod, w apistatus.Waiting) error {
	s.opts.Events.Eventf(pod, v1.EventTypeWarning, events.BackOffStartContainer, "%s", events.BackOffRestart(w.Container, pod))
	return &waitingError{w: w, err: fmt.Errorf("container %s of pod %s: %w", w.Container, pod.UID, ErrCrashLoopBackOff)}
}

// create pulls container c's image as its policy says, creates an instance
// of it in the sandbox and starts it.
func (s *Syncer) create(ctx context.Context, ps *podSync, c *v1.Container) error {
	pod := ps.pod
	if err := s.ensureImage(ctx, pod, c, ps.sbConfig); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	attempt := ps.rt.NextAttempt(c.Name)
	cfg, err := containerConfig(pod, c, attempt, s.opts.LogRoot != "")
	if err != nil {
		return err
	}
	cfg.Linux.Resources = qos.ContainerResources(pod, c, s.opts.MachineMemory)
	if err = s.containerSecurity(ctx, pod, c, cfg); err == nil {
		err = s.setEnv(ctx, ps, c, cfg)
	}
	if err == nil {
		cfg.Mounts, err = s.podFileMounts(ctx, ps, c, attempt)
	}
	if err == nil {
		err = targetNamespace(ps, c, cfg)
	}
	if err == nil && s.opts.Devices != nil {
		err = s.opts.Devices.AddDevices(ctx, pod, c, cfg)
	}
	if err != nil {
		s.opts.Events.Eventf(pod, v1.EventTypeWarning, events.FailedToCreateContainer, "%s", events.ContainerError(err))
		return waiting(c, "CreateContainerConfigError", err.Error(), err)
	}
	// The sandbox's log directory made again, should the removal of a
	// previous incarnation of the UID have taken it: the runtime creates
	// the container's log file in it.
	if err := ensureDir(ps.sbConfig.GetLogDirectory()); err != nil {
		return err
	}
	id, err := s.rt.CreateContainer(ctx, ps.sbID, cfg, ps.sbConfig)
	if err != nil {
		s.opts.Events.Eventf(pod, v1.EventTypeWarning, events.FailedToCreateContainer, "%s", events.ContainerError(err))
		return waiting(c, "CreateContainerError", err.Error(), fmt.Errorf("create container %s of pod %s: %w", c.Name, pod.UID, err))
	}
	s.opts.Events.Eventf(pod, v1.EventTypeNormal, events.CreatedContainer, "%s", events.Created(c.Name))
	return s.start(ctx, ps, c, id, attempt)
}

// replace stops an instance whose spec changed, within the pod's grace
// period and after the preStop hook of the new spec (the kubelet has only
// that one), so that a new instance is created from the new spec.
func (s *Syncer) replace(ctx context.Context, ps *podSync, c *v1.Container, cur *runtimeapi.ContainerStatus) error {
	err := s.killContainer(ctx, kill{pod: ps.pod, spec: c, status: cur, sbID: ps.sbID, grace: podGracePeriod(ps.pod),
		event: events.WillRestart(events.DefinitionChanged(c.Name))})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("replace changed container: %w", err)
	}
	return err
}

// start starts a created container unless termination was requested, and
// runs its postStart hook.
func (s *Syncer) start(ctx context.Context, ps *podSync, c *v1.Container, id string, attempt uint32) error {
	pod := ps.pod
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.rt.StartContainer(ctx, id); err != nil {
		s.opts.Events.Eventf(pod, v1.EventTypeWarning, events.FailedToStartContainer, "%s", events.ContainerError(err))
		return waiting(c, "RunContainerError", err.Error(), fmt.Errorf("start container %s of pod %s: %w", c.Name, pod.UID, err))
	}
	s.opts.Events.Eventf(pod, v1.EventTypeNormal, events.StartedContainer, "%s", events.Started(c.Name))
	s.linkLog(ps, c.Name, id, attempt)
	if c.Lifecycle != nil && c.Lifecycle.PostStart != nil {
		return s.postStart(ctx, ps, c, id)
	}
	return nil
}

// postStart runs the container's postStart hook right after its start and
// before the pod's next container starts, as the kubelet does. A hook that
// fails kills the container within the pod's grace period (after its
// preStop hook), which is then restarted as the restart policy says, with
// back-off. A termination requested meanwhile (ctx cancelled) ends the hook
// and leaves the container to the termination.
func (s *Syncer) postStart(ctx context.Context, ps *podSync, c *v1.Container, id string) error {
	pod := ps.pod
	err := s.runPostStart(ctx, ps, c, id)
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	s.opts.Logger.Warn("postStart hook failed", "pod", pod.Namespace+"/"+pod.Name, "container", c.Name, "err", err)
	// The container's status (PostStartHookError) has the hook's output,
	// the event not (events.PostStartHookFailed).
	s.opts.Events.Eventf(pod, v1.EventTypeWarning, events.FailedPostStartHook, "%s", events.PostStartHookFailed)
	hookErr := waiting(c, "PostStartHookError", err.Error(), err)
	running := &runtimeapi.ContainerStatus{
		Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: c.Name}, State: runtimeapi.ContainerState_CONTAINER_RUNNING,
	}
	kerr := s.killContainer(ctx, kill{pod: pod, spec: c, status: running, sbID: ps.sbID, grace: podGracePeriod(pod),
		event: events.KillPostStartHook})
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return errors.Join(hookErr, kerr)
}

// runPostStart runs the hook within its budget, cri.PostStartTimeout (see
// there why): an exec or httpGet hook that hangs fails then. A sleep hook
// is bounded by its own seconds.
func (s *Syncer) runPostStart(ctx context.Context, ps *podSync, c *v1.Container, id string) error {
	h := c.Lifecycle.PostStart
	if h.Sleep == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cri.PostStartTimeout)
		defer cancel()
	}
	return lifecycle.RunHook(ctx, s.rt, ps.pod, c, id, ps.sbID, h)
}

// ensureImage makes the container's image present as its pull policy says.
// Why it is not, when it fails, is in the error (waitingError).
func (s *Syncer) ensureImage(ctx context.Context, pod *v1.Pod, c *v1.Container, sbConfig *runtimeapi.PodSandboxConfig) error {
	spec := &runtimeapi.ImageSpec{Image: c.Image, UserSpecifiedImage: c.Image}
	if c.ImagePullPolicy != v1.PullAlways {
		resp, err := s.images.ImageStatus(ctx, spec, false)
		if err != nil {
			return fmt.Errorf("image status of %s: %w", c.Image, err)
		}
		if resp.GetImage() != nil {
			return nil
		}
		if c.ImagePullPolicy == v1.PullNever {
			msg := events.NeverPull(c.Image)
			s.opts.Events.Eventf(pod, v1.EventTypeWarning, events.ErrImageNeverPullPolicy, "%s", msg)
			return waiting(c, "ErrImageNeverPull", msg, errors.New(msg))
		}
	}
	if wait, reason := s.pulls.Wait(pod.UID, c.Image); wait > 0 {
		msg := fmt.Sprintf("Back-off pulling image %q: %s", c.Image, reason)
		return waiting(c, "ImagePullBackOff", msg, fmt.Errorf("container %s: %w %q", c.Name, ErrImagePullBackOff, c.Image))
	}
	s.opts.Events.Eventf(pod, v1.EventTypeNormal, events.PullingImage, "%s", events.Pulling(c.Image))
	// The client would log every failure at length (klog); the syncer
	// reports it itself, once per back-off, in short.
	if _, err := s.images.PullImage(klog.NewContext(ctx, klog.Logger{}), spec, nil, sbConfig); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		reason := shortReason(err)
		next := s.pulls.Failed(pod.UID, c.Image, reason)
		s.opts.Logger.Info("image pull failed", "pod", pod.Namespace+"/"+pod.Name, "container", c.Name, "image", c.Image, "nextPullIn", next)
		s.opts.Events.Eventf(pod, v1.EventTypeWarning, events.FailedToPullImage, "%s", events.FailedPull(c.Image, reason))
		return waiting(c, "ErrImagePull", reason, fmt.Errorf("container %s: pull image %q: %s", c.Name, c.Image, reason))
	}
	s.pulls.Succeeded(pod.UID, c.Image)
	return nil
}

// linkLog links a started instance's log where log shippers look
// (logs.LinkDir), as the kubelet does once the runtime started it (and so
// made its log); a link that fails is logged, the instance runs anyway.
func (s *Syncer) linkLog(ps *podSync, container, id string, attempt uint32) {
	if s.opts.LogRoot == "" {
		return
	}
	pod := ps.pod
	path := filepath.Join(ps.sbConfig.GetLogDirectory(), logPath(container, attempt))
	if err := logs.Link(s.opts.LogRoot, path, pod, container, id); err != nil {
		s.opts.Logger.Warn("container log link failed", "pod", pod.Namespace+"/"+pod.Name, "container", container, "err", err)
	}
}
