package shutdown

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/agent/admission"
)

// Killer stops pods; *worker.PodWorkers is one. KillPod must request the
// kill before it looks at ctx, and keep the request when ctx ends: ctx only
// bounds how long the caller waits for the pod's containers to stop.
type Killer interface {
	KillPod(ctx context.Context, pod *v1.Pod, evict bool, gracePeriodOverride *int64, statusFn func(*v1.PodStatus)) error
}

// EventRecorder records an event about a pod.
type EventRecorder interface {
	Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any)
}

// Config configures a Manager.
type Config struct {
	Bands      []Band                // as from Bands; empty: graceful shutdown disabled
	Killer     Killer                // required unless disabled
	Clock      clock.WithTicker      // nil: the real clock
	Recorder   EventRecorder         // nil: no events
	Logger     *slog.Logger          // nil: no logs
	Registerer prometheus.Registerer // nil: no metrics; unused when disabled
}

// Manager runs one graceful node shutdown. All methods are safe for
// concurrent use.
type Manager struct {
	bands   []Band
	killer  Killer
	clock   clock.WithTicker
	rec     EventRecorder
	log     *slog.Logger
	metrics *metrics

	mu  sync.Mutex
	run *run // guarded by mu; set once, when the shutdown starts
}

// run is the one shutdown; err is written before done is closed.
type run struct {
	done chan struct{}
	err  error
}

// NewManager returns a Manager. Without bands it is disabled, like the
// kubelet's stub: it admits every pod and Shutdown does nothing, so that the
// node shuts down without delay.
func NewManager(cfg Config) (*Manager, error) {
	bands, err := sortedBands(cfg.Bands)
	if err != nil {
		return nil, err
	}
	if len(bands) > 0 && cfg.Killer == nil {
		return nil, errors.New("shutdown: a Killer is required when graceful shutdown is enabled")
	}
	m := &Manager{bands: bands, killer: cfg.Killer, clock: cfg.Clock, rec: cfg.Recorder, log: cfg.Logger}
	if m.clock == nil {
		m.clock = clock.RealClock{}
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if len(bands) > 0 {
		m.metrics = newMetrics(cfg.Registerer)
	}
	return m, nil
}

// Enabled reports whether graceful node shutdown is configured: without
// bands Shutdown stops no pod.
func (m *Manager) Enabled() bool { return len(m.bands) > 0 }

// ShuttingDown reports whether a shutdown began; it stays true until
// Cancel.
func (m *Manager) ShuttingDown() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.run != nil
}

// Cancel ends a finished shutdown that logind cancelled
// (PrepareForShutdown(false)): Admit admits pods again and the next
// Shutdown runs anew, as the kubelet's manager clears nodeShuttingDownNow.
// The pods it stopped stay stopped. A shutdown still running is not
// cancelled: Cancel reports false and the node stays shutting down.
func (m *Manager) Cancel() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.run == nil {
		return true
	}
	select {
	case <-m.run.done:
		m.run = nil
		return true
	default:
		return false
	}
}

// Admit rejects every pod once the shutdown began: a pod started now would
// only be killed again, or outlive the shutdown's deadline.
func (m *Manager) Admit(*v1.Pod, []*v1.Pod) admission.Result {
	if m.ShuttingDown() {
		return admission.Result{Reason: admission.ReasonNodeShutdown, Message: "Pod was rejected as the node is shutting down."}
	}
	return admission.Result{Admit: true}
}

// Shutdown stops pods band by band, from the lowest priority to the
// highest, and returns once the last band is done (semantics §6).
// From the moment it is called, Admit rejects new pods. pods should be the
// active pods (admission.ActivePods) at that moment.
//
// Each kill carries the shutdown status (phase Failed unless Succeeded,
// DisruptionTarget condition); the engine applies it only once the pod's
// containers stopped, so no pod is reported Failed while it still runs.
//
// It runs once until Cancel. A call while it runs waits for that run and
// returns its result (or its own ctx's error if ctx ends first), and a
// call after it returns that result at once; pods given to those calls
// are ignored. When
// ctx ends the shutdown stops where it is and returns ctx's error, with
// the node left shutting down: kills already requested stand anyway.
func (m *Manager) Shutdown(ctx context.Context, pods []*v1.Pod) error {
	if len(m.bands) == 0 {
		return nil
	}
	m.mu.Lock()
	r, running := m.run, m.run != nil
	if !running {
		r = &run{done: make(chan struct{})}
		m.run = r
	}
	m.mu.Unlock()
	if running {
		select {
		case <-r.done:
			return r.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.err = m.shutdown(ctx, pods)
	close(r.done)
	return r.err
}

// shutdown runs the bands that have pods, in order.
func (m *Manager) shutdown(ctx context.Context, pods []*v1.Pod) error {
	start := m.clock.Now()
	m.metrics.started(start)
	m.log.Info("Graceful node shutdown started", "pods", len(pods), "bands", len(m.bands))
	defer func() {
		end := m.clock.Now()
		m.metrics.ended(end)
		m.log.Info("Graceful node shutdown ended", "duration", end.Sub(start))
	}()
	statusFn := podStatusFunc(m.clock)
	for _, g := range groupByPriority(m.bands, pods) {
		if len(g.pods) == 0 {
			continue
		}
		if err := m.runBand(ctx, g, statusFn); err != nil {
			return fmt.Errorf("graceful node shutdown stopped in band of priority %d: %w", g.Priority, err)
		}
	}
	return nil
}
