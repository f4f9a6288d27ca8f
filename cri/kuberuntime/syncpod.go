package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/apistatus"
	"github.com/podlife/podlife/cri/lifecycle"
	"github.com/podlife/podlife/cri/qos"
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
// cancels it when termination is requested.
func (s *Syncer) SyncPod(ctx context.Context, _ worker.UpdateType, pod, _ *v1.Pod, _ *worker.PodStatus) (bool, error) {
	p, err := readPod(ctx, s.rt, pod.UID)
	if err != nil {
		return false, err
	}
	sb := p.ReadySandbox()
	if sb == nil && len(p.Sandboxes) > 0 && len(p.Containers) > 0 &&
		(runsOnce(pod) || apistatus.Finished(pod, p, "")) {
		// The sandbox of a pod whose containers already ran died: a Never
		// pod none of whose containers may restart does not run them
		// again, nor a pod whose containers all completed for good, so it
		// is over. Init containers count, as in the kubelet: a Never pod
		// does not initialize twice.
		s.setStatus(pod, p, "", true, nil)
		return true, nil
	}
	if sb != nil && (apistatus.Finished(pod, p, sb.Id) || initFailed(pod, p, sb.Id)) {
		s.setStatus(pod, p, sb.Id, true, nil)
		return true, nil
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if reason := s.podRefusal(pod); reason != nil {
		return false, s.refusePod(pod, p, sb, reason)
	}
	vols, err := s.volumes(ctx, pod)
	if err != nil {
		s.failedMount(pod, p, sb, err)
		return false, err
	}
	sbConfig, sbID, err := s.ensureSandbox(ctx, pod, p, sb)
	if err != nil {
		s.opts.Events.Eventf(pod, v1.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", err)
		return false, err
	}
	if sb == nil {
		if p, err = readPod(ctx, s.rt, pod.UID); err != nil {
			return false, err
		}
	}
	ps := &podSync{pod: pod, rt: p, sbID: sbID, sbConfig: sbConfig, waits: map[string]apistatus.Waiting{}, vols: vols, newSandbox: sb == nil}
	errs, err := s.syncContainers(ctx, ps)
	if err != nil {
		return false, err
	}
	if p, err = readPod(ctx, s.rt, pod.UID); err != nil {
		return false, errors.Join(append(errs, err)...)
	}
	s.setStatus(pod, p, sbID, false, ps.waits)
	return false, errors.Join(errs...)
}

// podSync is what one SyncPod works with: the pod, what the runtime held
// of it when the sync began, the sandbox its containers go in, and why the
// containers it could not run wait.
type podSync struct {
	pod      *v1.Pod
	rt       *cri.PodRuntime
	sbID     string
	sbConfig *runtimeapi.PodSandboxConfig
	waits    map[string]apistatus.Waiting
	// ips are the sandbox's IPs once asked (sandboxIPs).
	ips []string
	// vols are the pod's volumes, set up on the node (volume.SetUp).
	vols map[string]volume.Volume
	// newSandbox: the sandbox was created in this sync.
	newSandbox bool
}

// syncContainers starts the ephemeral containers not started yet, the
// init containers whose turn it is and, once the pod is initialized, syncs
// its regular containers. It returns the containers' errors, or ctx's
// error alone once it is cancelled.
func (s *Syncer) syncContainers(ctx context.Context, ps *podSync) ([]error, error) {
	errs := s.startEphemeral(ctx, ps, ps.newSandbox)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	plan := holdForStartup(ps.pod, ps.rt, ps.sbID, planInit(ps.pod, ps.rt, ps.sbID), s.started)
	plan.start = append(plan.start, s.unhealthySidecars(ps)...)
	for _, c := range plan.start {
		cur, _ := ps.rt.Latest(ps.sbID, c.Name)
		if err := s.runContainer(ctx, ps, c, cur, true); err != nil {
			errs = append(errs, err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if !plan.initialized {
		return errs, nil
	}
	for i := range ps.pod.Spec.Containers {
		if err := s.syncContainer(ctx, ps, &ps.pod.Spec.Containers[i]); err != nil {
			errs = append(errs, err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return errs, nil
}

// ensureSandbox returns the pod's ready sandbox, or creates the next one.
// Containers left in older sandboxes are stopped first: a pod runs in one
// sandbox at a time.
func (s *Syncer) ensureSandbox(ctx context.Context, pod *v1.Pod, p *cri.PodRuntime, sb *runtimeapi.PodSandbox) (*runtimeapi.PodSandboxConfig, string, error) {
	if sb != nil {
		cfg, err := sandboxConfig(pod, sb.GetMetadata().GetAttempt(), s.opts.LogRoot)
		return cfg, sb.Id, err
	}
	attempt := p.NextSandboxAttempt()
	cfg, err := sandboxConfig(pod, attempt, s.opts.LogRoot)
	if err != nil {
		return nil, "", err
	}
	// The runtime class is resolved first: a pod whose class is missing
	// keeps what it has (the kubelet fails the sandbox's creation alike).
	handler, err := s.runtimeHandler(ctx, pod)
	if err != nil {
		return nil, "", err
	}
	if err := s.killContainers(ctx, pod, p, p.NotExited(), podGracePeriod(pod)); err != nil {
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
		return nil, "", fmt.Errorf("run sandbox of pod %s: %w", pod.UID, err)
	}
	if attempt > 0 {
		s.opts.Events.Eventf(pod, v1.EventTypeNormal, "SandboxChanged", "Pod sandbox changed, it will be killed and re-created.")
	}
	return cfg, id, nil
}

// syncContainer starts regular container c if it has no instance in the
// sandbox, or restarts it after an exit if its restart policy and rules
// say so (else the pod's policy).
func (s *Syncer) syncContainer(ctx context.Context, ps *podSync, c *v1.Container) error {
	cur, _ := ps.rt.LatestFor(&ps.pod.Spec, ps.sbID, c)
	return s.runContainer(ctx, ps, c, cur, cur != nil && cri.ContainerShouldRestart(&ps.pod.Spec, c, cur.ExitCode))
}

// runContainer makes container c run in the sandbox, given cur, its newest
// instance there: it creates c when cur is nil, starts cur when only
// created, and re-creates c after an exit when restart says so and its
// crash-loop back-off allows; ps.waits gets the reason when it does not
// run.
func (s *Syncer) runContainer(ctx context.Context, ps *podSync, c *v1.Container, cur *runtimeapi.ContainerStatus, restart bool) error {
	pod := ps.pod
	switch {
	case cur == nil:
	case cur.State != runtimeapi.ContainerState_CONTAINER_EXITED && specChanged(cur, c):
		if err := s.replace(ctx, ps, c, cur); err != nil {
			return err
		}
	case cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING && s.unhealthy(cur.Id):
		if err := s.killUnhealthy(ctx, ps, c, cur); err != nil || !restartsUnhealthy(pod, c) {
			return err
		}
		if err := s.restartBackoff(ps, c, s.opts.Clock.Now()); err != nil {
			return err
		}
	case cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING:
		return nil
	case cur.State == runtimeapi.ContainerState_CONTAINER_CREATED:
		return s.start(ctx, ps, c, cur.Id)
	case !restart:
		return nil
	default:
		if err := s.restartBackoff(ps, c, time.Unix(0, cur.FinishedAt)); err != nil {
			return err
		}
	}
	if err := s.ensureImage(ctx, pod, c, ps.sbConfig, ps.waits); err != nil {
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
	if err != nil {
		ps.waits[c.Name] = apistatus.Waiting{Reason: "CreateContainerConfigError", Message: err.Error()}
		s.opts.Events.Eventf(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
		return err
	}
	// The sandbox's log directory made again, should the removal of a
	// previous incarnation of the UID have taken it: the runtime creates
	// the container's log file in it.
	if err := ensureDir(ps.sbConfig.GetLogDirectory()); err != nil {
		return err
	}
	id, err := s.rt.CreateContainer(ctx, ps.sbID, cfg, ps.sbConfig)
	if err != nil {
		ps.waits[c.Name] = apistatus.Waiting{Reason: "CreateContainerError", Message: err.Error()}
		s.opts.Events.Eventf(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
		return fmt.Errorf("create container %s of pod %s: %w", c.Name, pod.UID, err)
	}
	s.opts.Events.Eventf(pod, v1.EventTypeNormal, "Created", "Created container %s", c.Name)
	return s.start(ctx, ps, c, id)
}

// restartBackoff returns ErrCrashLoopBackOff (wrapped) while container c,
// which exited at exitedAt, must still wait for its restart.
func (s *Syncer) restartBackoff(ps *podSync, c *v1.Container, exitedAt time.Time) error {
	pod := ps.pod
	if wait := s.backoff.restart(pod.UID, c.Name, exitedAt); wait > 0 {
		msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", wait.Round(time.Second), c.Name, pod.Name)
		ps.waits[c.Name] = apistatus.Waiting{Reason: "CrashLoopBackOff", Message: msg}
		s.opts.Events.Eventf(pod, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", c.Name)
		return fmt.Errorf("container %s of pod %s: %w", c.Name, pod.UID, ErrCrashLoopBackOff)
	}
	return nil
}

// specChanged reports whether the container instance was created from
// another spec than c (an update of the pod changed it).
func specChanged(cur *runtimeapi.ContainerStatus, c *v1.Container) bool {
	h, ok := cur.GetAnnotations()[cri.ContainerHashAnnotation]
	return ok && h != containerHash(c)
}

// replace stops an instance whose spec changed, within the pod's grace
// period and after the preStop hook of the new spec (the kubelet has only
// that one), so that a new instance is created from the new spec.
func (s *Syncer) replace(ctx context.Context, ps *podSync, c *v1.Container, cur *runtimeapi.ContainerStatus) error {
	err := s.killContainer(ctx, kill{pod: ps.pod, spec: c, status: cur, sbID: ps.sbID, grace: podGracePeriod(ps.pod),
		event: fmt.Sprintf("Container %s definition changed, will be restarted", c.Name)})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("replace changed container: %w", err)
	}
	return err
}

// start starts a created container unless termination was requested, and
// runs its postStart hook.
func (s *Syncer) start(ctx context.Context, ps *podSync, c *v1.Container, id string) error {
	pod := ps.pod
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.rt.StartContainer(ctx, id); err != nil {
		ps.waits[c.Name] = apistatus.Waiting{Reason: "RunContainerError", Message: err.Error()}
		s.opts.Events.Eventf(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
		return fmt.Errorf("start container %s of pod %s: %w", c.Name, pod.UID, err)
	}
	s.opts.Events.Eventf(pod, v1.EventTypeNormal, "Started", "Started container %s", c.Name)
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
	// The kubelet leaves the hook's output out of the event: it may hold
	// secrets. The container's status (PostStartHookError) has it.
	s.opts.Events.Eventf(pod, v1.EventTypeWarning, "FailedPostStartHook", "PostStartHook failed")
	ps.waits[c.Name] = apistatus.Waiting{Reason: "PostStartHookError", Message: err.Error()}
	running := &runtimeapi.ContainerStatus{
		Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: c.Name}, State: runtimeapi.ContainerState_CONTAINER_RUNNING,
	}
	kerr := s.killContainer(ctx, kill{pod: pod, spec: c, status: running, sbID: ps.sbID, grace: podGracePeriod(pod),
		event: fmt.Sprintf("Container %s failed its postStart hook, will be killed", c.Name)})
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return errors.Join(err, kerr)
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

// runsOnce reports whether the pod runs its containers at most once: its
// restartPolicy is Never and no container may restart by a policy or rule
// of its own (the kubelet's runOnce in SyncPod).
func runsOnce(pod *v1.Pod) bool {
	if pod.Spec.RestartPolicy != v1.RestartPolicyNever {
		return false
	}
	for i := range pod.Spec.Containers {
		if cri.ContainerRestartable(&pod.Spec, &pod.Spec.Containers[i]) {
			return false
		}
	}
	return true
}

// ensureImage makes the container's image present as its pull policy says.
func (s *Syncer) ensureImage(ctx context.Context, pod *v1.Pod, c *v1.Container, sbConfig *runtimeapi.PodSandboxConfig, waits map[string]apistatus.Waiting) error {
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
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
			waits[c.Name] = apistatus.Waiting{Reason: "ErrImageNeverPull", Message: msg}
			s.opts.Events.Eventf(pod, v1.EventTypeWarning, "ErrImageNeverPull", "%s", msg)
			return errors.New(msg)
		}
	}
	if wait, reason := s.pulls.Wait(pod.UID, c.Image); wait > 0 {
		msg := fmt.Sprintf("Back-off pulling image %q: %s", c.Image, reason)
		waits[c.Name] = apistatus.Waiting{Reason: "ImagePullBackOff", Message: msg}
		return fmt.Errorf("container %s: %w %q", c.Name, ErrImagePullBackOff, c.Image)
	}
	s.opts.Events.Eventf(pod, v1.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
	// The client would log every failure at length (klog); the syncer
	// reports it itself, once per back-off, in short.
	if _, err := s.images.PullImage(klog.NewContext(ctx, klog.Logger{}), spec, nil, sbConfig); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		reason := shortReason(err)
		next := s.pulls.Failed(pod.UID, c.Image, reason)
		waits[c.Name] = apistatus.Waiting{Reason: "ErrImagePull", Message: reason}
		s.opts.Events.Eventf(pod, v1.EventTypeWarning, "Failed", "Failed to pull image %q for container %s: %s (next pull in %s)", c.Image, c.Name, reason, next)
		return fmt.Errorf("container %s: pull image %q: %s", c.Name, c.Image, reason)
	}
	s.pulls.Succeeded(pod.UID, c.Image)
	return nil
}

// setStatus generates and writes the pod's status.
func (s *Syncer) setStatus(pod *v1.Pod, p *cri.PodRuntime, sbID string, terminal bool, waits map[string]apistatus.Waiting) {
	in := apistatus.Input{Pod: pod, Runtime: p, SandboxID: sbID, Terminal: terminal, Waits: waits, RuntimeName: s.opts.RuntimeName, Messages: s.messages(), Probes: s.opts.Probes}
	if sbID != "" {
		in.PodIP = s.podIP(sbID)
	}
	s.opts.Probes.UpdatePod(pod, running(p, sbID))
	s.opts.Statuses.SetPodStatus(pod, apistatus.Generate(in))
}

// podIP is the sandbox's IP, or "" when the runtime does not say.
func (s *Syncer) podIP(sbID string) string { return cri.SandboxIP(context.Background(), s.rt, sbID) }
