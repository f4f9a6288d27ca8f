package prober

import (
	"context"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/cri/events"
)

// worker runs one probe of one container instance: one timer while idle,
// one goroutine while a run is in flight.
type worker struct {
	m     *Manager
	kind  Kind
	cp    *containerProbes
	probe *v1.Probe // with the API's defaults

	// mu guards the fields below; the manager's lock may be held when
	// taking it, never the other way round.
	mu        sync.Mutex
	stopped   bool
	timer     clock.Timer
	cancelRun context.CancelFunc
	counts    threshold
}

// schedule sets the timer for the next run, d from now.
func (w *worker) schedule(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.timer = w.m.cfg.Clock.AfterFunc(d, w.fire)
	}
}

// fire starts a run on a goroutine of its own: the timer's callback must
// return at once (a fake clock calls it with its lock held).
func (w *worker) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	ctx, cancel := context.WithCancel(w.m.ctx)
	w.cancelRun = cancel
	// Added under w.mu before stop can set stopped: Stop's Wait comes
	// after every worker was stopped, so it never races this Add.
	w.m.runs.Add(1)
	go w.run(ctx, cancel)
}

// run probes once, records the result, and schedules the next run a period
// after this one began, unless the probe is done: a liveness or startup
// failure holds the probe until the container is replaced, and a startup
// success hands over to the liveness and readiness probes.
func (w *worker) run(ctx context.Context, cancel context.CancelFunc) {
	defer w.m.runs.Done()
	defer cancel()
	began := w.m.cfg.Clock.Now()
	res, out, err := w.m.cfg.Runner.Probe(ctx, w.cp.target, w.probe)
	out = cutOutput(out)
	if ctx.Err() != nil {
		return // stopped meanwhile
	}
	if res == Warning && err == nil {
		t := w.cp.target
		w.m.cfg.Events.Eventf(t.Pod, v1.EventTypeWarning, events.ContainerProbeWarning, "%s", events.ProbeWarning(w.kind.String(), out))
		res = Success
	}
	w.mu.Lock()
	if !w.stopped { // a stopped worker's series are gone: keep them gone
		w.m.total.observe(w, res, err)
	}
	w.mu.Unlock()
	if !w.record(res, out, err) {
		w.stop()
		return
	}
	period := time.Duration(w.probe.PeriodSeconds) * time.Second
	w.schedule(max(period-w.m.cfg.Clock.Since(began), 0))
}

// record counts a run's result and records it once its threshold is
// reached; it reports whether the probe goes on.
func (w *worker) record(res Result, out string, err error) bool {
	t := w.cp.target
	if err != nil {
		w.m.cfg.Logger.Warn("probe errored", "probe", w.kind.String(), "pod", t.Pod.Namespace+"/"+t.Pod.Name,
			"container", t.Container.Name, "err", err)
		return true
	}
	if res == Failure {
		w.m.cfg.Events.Eventf(t.Pod, v1.EventTypeWarning, events.ContainerUnhealthy, "%s", events.ProbeFailed(w.kind.String(), out))
	}
	// The result is set under w.mu, so that a stopped worker's run
	// records nothing after its container's results were dropped.
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return false
	}
	if !w.counts.observe(res, w.probe) {
		w.mu.Unlock()
		return true
	}
	changed := w.m.results.set(w.kind, t.ContainerID, res)
	w.mu.Unlock()
	if changed {
		w.m.cfg.OnChange(Update{Kind: w.kind, Pod: t.Pod, ContainerName: t.Container.Name, ContainerID: t.ContainerID, Result: res})
	}
	switch {
	case w.kind != Readiness && res == Failure:
		return false
	case w.kind == Startup && res == Success:
		w.m.startupSucceeded(w)
		return false
	}
	return true
}

// stop stops the timer and cuts off a run in flight.
func (w *worker) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.m.total.forget(w)
	}
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.cancelRun != nil {
		w.cancelRun()
	}
}

// maxOutputLength bounds the output of a probe run that an event carries:
// the kubelet's 10 KiB (pkg/probe's exec and http probers). A Runner cuts
// it already (cri/lifecycle's does); this holds for any.
const maxOutputLength = 10 << 10

// cutOutput is out cut to maxOutputLength bytes, in a copy of its own when
// cut: the run's whole output is not kept behind it.
func cutOutput(out string) string {
	if len(out) <= maxOutputLength {
		return out
	}
	return strings.Clone(out[:maxOutputLength])
}
