package prober

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// EventRecorder records an event about a pod, Eventf style.
type EventRecorder interface {
	Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any)
}

// Update is a change of a recorded result.
type Update struct {
	Kind          Kind
	Pod           *v1.Pod
	ContainerName string
	ContainerID   string
	Result        Result
}

// Config configures a Manager.
type Config struct {
	Runner Runner                     // required
	Clock  clock.WithDelayedExecution // nil: the real clock
	Events EventRecorder              // nil: events are dropped
	Logger *slog.Logger               // nil: no logs
	// OnChange is told of every change of a recorded result, from the
	// goroutine of the probe run; it must not block for long.
	OnChange func(Update)
	// Registerer gets prober_probe_total; nil: no metric.
	Registerer prometheus.Registerer
}

// Running is a running container of a pod, as the runtime shows it.
type Running struct {
	Name      string
	ID        string
	SandboxID string
	StartedAt time.Time
}

// Manager runs the probes of running containers and holds their results.
// Its methods are safe for concurrent use, and a nil *Manager runs no
// probe and has no results.
type Manager struct {
	cfg     Config
	results *Results
	total   *probeTotal
	ctx     context.Context // the probe runs' context, cancelled by Stop
	cancel  context.CancelFunc

	mu     sync.Mutex
	closed bool
	pods   map[types.UID]*podProbes
	// runs counts the probe runs in flight, for Stop.
	runs sync.WaitGroup
}

// podProbes are one pod's probes.
type podProbes struct {
	// terminating: termination was requested; only readiness probes run.
	terminating bool
	containers  map[string]*containerProbes // by container ID
}

// containerProbes are one container instance's probe workers.
type containerProbes struct {
	target    Target
	startedAt time.Time
	workers   map[Kind]*worker
}

// NewManager returns a Manager; Stop ends its probes.
func NewManager(cfg Config) *Manager {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Events == nil {
		cfg.Events = discard{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.OnChange == nil {
		cfg.OnChange = func(Update) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{cfg: cfg, results: newResults(), total: newProbeTotal(cfg.Registerer), ctx: ctx, cancel: cancel, pods: map[types.UID]*podProbes{}}
}

type discard struct{}

func (discard) Eventf(*v1.Pod, string, string, string, ...any) {}

// Results are the recorded results.
func (m *Manager) Results() *Results {
	if m == nil {
		return nil
	}
	return m.results
}

// UpdatePod makes the probes of pod's containers follow running, its
// containers that run now: a container seen for the first time gets its
// probes scheduled (its startup probe first, if it has one), and the
// probes and results of a container no longer running are dropped.
func (m *Manager) UpdatePod(pod *v1.Pod, running []Running) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	pp := m.pods[pod.UID]
	now := make(map[string]bool, len(running))
	for _, r := range running {
		now[r.ID] = true
		if pp != nil && pp.containers[r.ID] != nil {
			continue
		}
		c := probedContainer(pod, r.Name)
		if c == nil {
			continue
		}
		if pp == nil {
			pp = &podProbes{containers: map[string]*containerProbes{}}
			m.pods[pod.UID] = pp
		}
		cp := &containerProbes{
			target:    Target{Pod: pod, Container: c, ContainerID: r.ID, SandboxID: r.SandboxID},
			startedAt: r.StartedAt, workers: map[Kind]*worker{},
		}
		pp.containers[r.ID] = cp
		if c.StartupProbe != nil && !pp.terminating {
			m.startLocked(cp, Startup)
		} else {
			m.startAfterStartupLocked(pp, cp)
		}
	}
	if pp == nil {
		return
	}
	for id, cp := range pp.containers {
		if !now[id] {
			m.dropLocked(pp, id, cp)
		}
	}
	if len(pp.containers) == 0 && !pp.terminating {
		delete(m.pods, pod.UID)
	}
}

// probedContainer is the pod's container or sidecar (restartable init
// container) of that name when it has a probe; regular init containers are
// not probed, as in the kubelet.
func probedContainer(pod *v1.Pod, name string) *v1.Container {
	var c *v1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			c = &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		if ic.Name == name && ic.RestartPolicy != nil && *ic.RestartPolicy == v1.ContainerRestartPolicyAlways {
			c = ic
		}
	}
	if c == nil || (c.StartupProbe == nil && c.LivenessProbe == nil && c.ReadinessProbe == nil) {
		return nil
	}
	return c
}

// startAfterStartupLocked starts the container's liveness and readiness
// probes: at once without a startup probe, else once it succeeded. A
// terminating pod's containers get their readiness probe only.
func (m *Manager) startAfterStartupLocked(pp *podProbes, cp *containerProbes) {
	if cp.target.Container.LivenessProbe != nil && !pp.terminating {
		m.startLocked(cp, Liveness)
	}
	if cp.target.Container.ReadinessProbe != nil {
		m.startLocked(cp, Readiness)
	}
}

func (m *Manager) startLocked(cp *containerProbes, k Kind) {
	w := &worker{m: m, kind: k, cp: cp, probe: withDefaults(probeOf(cp.target.Container, k), k)}
	cp.workers[k] = w
	// The first run is due initialDelaySeconds after the container
	// started (the kubelet's workers skip the runs before it). A start
	// time ahead of the clock (the runtime's clock is not the agent's)
	// counts as now.
	elapsed := max(m.cfg.Clock.Since(cp.startedAt), 0)
	w.schedule(max(time.Duration(w.probe.InitialDelaySeconds)*time.Second-elapsed, 0))
}

// dropLocked stops the container's probes and forgets their results.
func (m *Manager) dropLocked(pp *podProbes, id string, cp *containerProbes) {
	for _, w := range cp.workers {
		w.stop()
	}
	delete(pp.containers, id)
	m.results.remove(id)
}

// startupSucceeded starts the liveness and readiness probes of the
// container whose startup probe w just succeeded.
func (m *Manager) startupSucceeded(w *worker) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pp := m.pods[w.cp.target.Pod.UID]
	if m.closed || pp == nil || pp.containers[w.cp.target.ContainerID] != w.cp {
		return
	}
	m.startAfterStartupLocked(pp, w.cp)
}

// PodTerminating stops the pod's startup and liveness probes: a pod whose
// termination was requested is not restarted for a failed probe. Its
// readiness probes go on until its containers stop (endpoints follow a
// terminating pod's readiness), as in the kubelet.
func (m *Manager) PodTerminating(uid types.UID) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	pp := m.pods[uid]
	if pp == nil {
		pp = &podProbes{containers: map[string]*containerProbes{}}
		m.pods[uid] = pp
	}
	pp.terminating = true
	for _, cp := range pp.containers {
		for _, k := range []Kind{Startup, Liveness} {
			if w := cp.workers[k]; w != nil {
				w.stop()
				delete(cp.workers, k)
			}
		}
	}
}

// RemovePod stops the pod's probes and forgets their results.
func (m *Manager) RemovePod(uid types.UID) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if pp := m.pods[uid]; pp != nil {
		for id, cp := range pp.containers {
			m.dropLocked(pp, id, cp)
		}
		delete(m.pods, uid)
	}
}

// Stop ends every probe and waits for the runs in flight to return.
func (m *Manager) Stop() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.closed = true
	for uid, pp := range m.pods {
		for id, cp := range pp.containers {
			m.dropLocked(pp, id, cp)
		}
		delete(m.pods, uid)
	}
	m.mu.Unlock()
	m.cancel()
	m.runs.Wait()
}
