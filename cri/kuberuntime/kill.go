package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/events"
	"github.com/podlife/podlife/cri/lifecycle"
)

// Stopping a container as the kubelet's killContainer does: its preStop
// hook runs first, inside the grace period; a sidecar then waits for its
// turn (termOrder); the stop signal and, at the deadline, SIGKILL get what
// remains of the grace period, and never less than minimumGracePeriod.

// minimumGracePeriod is the kubelet's minimumGracePeriodInSeconds: every
// stop gives the container this long between its stop signal and SIGKILL,
// whatever a hook, its turn or the grace period asked for, so that a
// container always has a chance to exit by itself.
const minimumGracePeriod = 2

// graceDuration is grace seconds as a duration, clamped as stopTimeout
// clamps it, so that it cannot overflow.
func graceDuration(grace int64) time.Duration { return time.Duration(stopTimeout(grace)) * time.Second }

// spend is what remains of grace seconds once spent went to a hook or to a
// wait for the container's turn: the whole seconds spent are taken off
// (truncated down, as the kubelet counts them), never below 0.
func spend(grace int64, spent time.Duration) int64 {
	return max(grace-int64(spent/time.Second), 0)
}

// stopGrace is the StopContainer timeout for the grace that remains.
func stopGrace(remaining int64) int64 { return stopTimeout(max(remaining, minimumGracePeriod)) }

// hookBound is how long a preStop hook may run past the grace period it
// started with, when no stop of its container ends it first (a stop that
// fails, a termination nobody calls again): a stop's own bound
// (cri.CallTimeout past its grace) and its minimum.
const hookBound = cri.CallTimeout + minimumGracePeriod*time.Second

// kill is one container to stop.
type kill struct {
	pod    *v1.Pod       // nil: a pod known only to the runtime (no hooks, no order)
	spec   *v1.Container // nil: the container is not in the pod's spec
	status *runtimeapi.ContainerStatus
	sbID   string // the container's sandbox, whose IP an httpGet hook calls
	grace  int64
	order  *termOrder // nil: no order
	event  string     // the Killing event's message
}

// killContainer stops one container: preStop hook, turn, stop. A cancelled
// ctx (a shorter grace period arrived) ends it at once with ctx's error,
// leaving a hook in progress to the next call.
func (s *Syncer) killContainer(ctx context.Context, k kill) error {
	name := k.status.GetMetadata().GetName()
	defer k.order.stopped(name)
	if k.pod != nil {
		s.opts.Events.Eventf(k.pod, v1.EventTypeNormal, events.KillingContainer, "%s", k.event)
	}
	remaining := k.grace
	if k.hasPreStop() && remaining > 0 {
		spent, err := s.preStop(ctx, k, remaining)
		if err != nil {
			return err
		}
		remaining = spend(remaining, spent)
	}
	waited, err := k.order.waitForTurn(ctx, name, remaining)
	if err != nil {
		return err
	}
	remaining = spend(remaining, waited)
	if err := s.rt.StopContainer(ctx, k.status.Id, stopGrace(remaining)); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return fmt.Errorf("stop container %s (%s) of pod %s: %w", name, k.status.Id, k.uid(), err)
	}
	s.hooks.forget(k.status.Id)
	return nil
}

// hasPreStop reports whether the container runs and has a preStop hook: a
// container that never started has nothing to run it in.
func (k kill) hasPreStop() bool {
	return k.pod != nil && k.spec != nil && k.spec.Lifecycle != nil && k.spec.Lifecycle.PreStop != nil &&
		k.status.State == runtimeapi.ContainerState_CONTAINER_RUNNING
}

// uid is the pod's UID, from the spec or the container's label.
func (k kill) uid() types.UID {
	if k.pod != nil {
		return k.pod.UID
	}
	return types.UID(k.status.GetLabels()[cri.PodUIDLabel])
}

// preStop runs the container's preStop hook, or joins the run a cancelled
// call started, waits for it at most grace seconds, and returns how long it
// waited. A hook still running then goes on, as the kubelet leaves it
// (executePreStopHook stops waiting, not the hook): an exec hook ends with
// the container, which the stop kills; the container's stop (forget)
// cancels what remains. A failed hook does not stop the stop: as the
// kubelet, it is an event.
func (s *Syncer) preStop(ctx context.Context, k kill, grace int64) (time.Duration, error) {
	start := time.Now()
	run := s.hooks.start(ctx, k.pod.UID, k.status.Id, grace, func(hctx context.Context) {
		// The hook is part of the kill: its exec runs in the kill lane,
		// behind no probe, postStart hook or pull (cri.Lanes).
		err := lifecycle.RunHook(cri.ForKill(hctx), s.rt, k.pod, k.spec, k.status.Id, k.sbID, k.spec.Lifecycle.PreStop)
		if err != nil && hctx.Err() == nil {
			s.opts.Logger.Warn("preStop hook failed", "pod", k.pod.Namespace+"/"+k.pod.Name, "container", k.spec.Name, "err", err)
			// The kubelet leaves the hook's output out of the event:
			// it may hold secrets.
			s.opts.Events.Eventf(k.pod, v1.EventTypeWarning, events.FailedPreStopHook, "%s", events.PreStopHookFailed)
		}
	})
	limit := time.NewTimer(graceDuration(grace))
	defer limit.Stop()
	select {
	case <-run.done:
	case <-limit.C:
		s.opts.Logger.Info("preStop hook not completed in the grace period; the container is stopped", "pod", k.pod.Namespace+"/"+k.pod.Name, "container", k.spec.Name, "grace", grace)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return time.Since(start), nil
}

// killContainers stops containers concurrently, each within grace seconds
// (its preStop hook, its turn, its stop: killContainer). pod, when known,
// gives their specs, hooks, order and events. A cancelled ctx (a shorter
// grace period arrived) ends the wait at once.
func (s *Syncer) killContainers(ctx context.Context, pod *v1.Pod, p *cri.PodRuntime, containers []*runtimeapi.ContainerStatus, grace int64) error {
	names := make([]string, len(containers))
	for i, c := range containers {
		names[i] = c.GetMetadata().GetName()
	}
	order := newTermOrder(pod, names)
	errs := make([]error, len(containers))
	var wg sync.WaitGroup
	for i, c := range containers {
		k := kill{pod: pod, status: c, sbID: p.SandboxOf[c.Id], grace: grace, order: order,
			event: events.Stopping(names[i])}
		if pod != nil {
			k.spec = cri.ContainerSpec(pod, names[i])
		}
		wg.Go(func() { errs[i] = s.killContainer(ctx, k) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// preStopHooks remembers, by container ID, the preStop hooks started and
// not yet followed by a successful stop. A termination called again (a
// shorter grace period cancelled the first) finds the hook in progress and
// waits for it again, within the new grace period, instead of running it a
// second time; a hook that ended is not run again for the same container.
type preStopHooks struct {
	mu   sync.Mutex
	runs map[string]*hookRun
	wg   sync.WaitGroup
}

// hookRun is one preStop hook's run; done is closed when it ended.
type hookRun struct {
	uid    types.UID
	done   chan struct{}
	cancel context.CancelFunc
}

// start runs hook for container id unless it ran already, and returns the
// run. The hook's own context is not ctx, which a shorter grace period
// cancels: it ends when the container stopped (forget), its pod terminated
// (forgetPod) or the syncer closes, and at the latest hookBound after
// grace, as a stop's call is bounded, so that a hook nobody waits for
// cannot run forever.
func (h *preStopHooks) start(ctx context.Context, uid types.UID, id string, grace int64, hook func(context.Context)) *hookRun {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r, ok := h.runs[id]; ok {
		return r
	}
	if h.runs == nil {
		h.runs = map[string]*hookRun{}
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), graceDuration(grace)+hookBound)
	r := &hookRun{uid: uid, done: make(chan struct{}), cancel: cancel}
	h.runs[id] = r
	h.wg.Go(func() {
		defer close(r.done)
		defer cancel()
		hook(hctx)
	})
	return r
}

// forget cuts off and drops container id's hook: the container stopped,
// and a hook the stop left running has nothing more to do.
func (h *preStopHooks) forget(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r, ok := h.runs[id]; ok {
		r.cancel()
		delete(h.runs, id)
	}
}

// forgetPod cuts off and drops the hooks of the pod's containers: the pod
// terminated.
func (h *preStopHooks) forgetPod(uid types.UID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, r := range h.runs {
		if r.uid == uid {
			r.cancel()
			delete(h.runs, id)
		}
	}
}

// close cuts off every hook and waits for them to return.
func (h *preStopHooks) close() {
	h.mu.Lock()
	for _, r := range h.runs {
		r.cancel()
	}
	h.mu.Unlock()
	h.wg.Wait()
}
