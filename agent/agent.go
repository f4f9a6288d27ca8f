package agent

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/agent/admission"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/devicemanager"
	"github.com/podlife/podlife/agent/kubeletserver"
	"github.com/podlife/podlife/agent/manifests"
	"github.com/podlife/podlife/agent/podstatus"
	"github.com/podlife/podlife/agent/server"
	"github.com/podlife/podlife/agent/shutdown"
	"github.com/podlife/podlife/cri/dns"
	"github.com/podlife/podlife/cri/embedded"
	"github.com/podlife/podlife/cri/kuberuntime"
	"github.com/podlife/podlife/cri/logs"
	"github.com/podlife/podlife/cri/mount"
	"github.com/podlife/podlife/cri/podcache"
	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/kubetypes"
	"github.com/podlife/podlife/worker"
)

// Options are what an embedder injects into an Agent. The zero value works.
type Options struct {
	Logger   *slog.Logger         // nil: no logs
	Clock    clock.WithTicker     // nil: the real clock
	Registry *prometheus.Registry // nil: a new registry
	// Observer receives every transition of the engine (a trace writer).
	Observer fsm.Observer
	// SyncBackOff is how long the engine waits before retrying a failed
	// sync; 0 is the engine's default (10 s).
	SyncBackOff time.Duration
	// RestartBackoff and MaxRestartBackoff are the crash-loop back-off's
	// first delay and cap (kuberuntime.Options); 0 is the kubelet's 10 s
	// and 5 min. Tests of crash loops shorten them.
	RestartBackoff, MaxRestartBackoff time.Duration
	// ServingCertificate gives the kubelet API's serving certificate (one
	// the CSR API issued and rotates); nil: with RotateServerCertificates,
	// the agent's own serving certificate manager; else Config's files,
	// else a self-signed one.
	ServingCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	// ReadOnlyAnyPort opens the read-only port on a free loopback port
	// when the configuration leaves it off (it cannot ask for a free
	// port: readOnlyPort 0 is off): for tests and embedders, which read
	// Addr.
	ReadOnlyAnyPort bool
	// Stats serves /stats/summary and /metrics/resource, on the kubelet
	// API and the read-only port; nil: the runtime's and the node's
	// (cri/stats).
	Stats kubeletserver.StatsProvider
	// SystemBusAddress is the D-Bus address where systemd-logind is
	// found; "": the system bus (DBUS_SYSTEM_BUS_ADDRESS, else
	// /run/dbus/system_bus_socket).
	SystemBusAddress string
	// NoLogind leaves systemd-logind alone: no inhibitor lock, no node
	// shutdown from PrepareForShutdown (tests that must not lock the
	// machine's shutdown).
	NoLogind bool
	// healthzAnyPort opens the healthz port on a free port instead of
	// Config.HealthzPort (tests: export_test.go).
	healthzAnyPort bool
}

// Agent is a running node agent. Its goroutines start with Run.
type Agent struct {
	cfg      config.Config
	opts     Options
	log      *slog.Logger
	clock    clock.WithTicker
	registry *prometheus.Registry

	conn      *runtimeConn
	syncer    *kuberuntime.Syncer
	cache     *podcache.Cache
	workers   *worker.PodWorkers
	source    *manifests.Source // nil: no manifest directory
	cluster   *cluster          // nil: no API server (Config.Kubeconfig "")
	admission *admission.Chain
	devices   *devicemanager.Manager
	shutdown  *shutdown.Manager
	statuses  *podstatus.Manager
	probes    *prober.Manager
	events    eventLog
	gauges    *podGauges
	// server is the read-only TCP endpoint and the control socket (at
	// controlSocket), with the agent as their host.
	server        *server.Server
	controlSocket string
	// kubeletAPI is the kubelet API on Config.Port; nil when off.
	kubeletAPI *kubeletserver.Server
	healthz    *server.Healthz // nil: off (HealthzPort 0)
	// probeMetrics holds prober_probe_total (the kubelet API's
	// /metrics/probes).
	probeMetrics *prometheus.Registry
	// rotator rotates the container logs; nil on the embedded runtime,
	// which writes none.
	rotator *logs.Rotator

	shutdownOnce      sync.Once
	shutdownRequested chan struct{}

	mu sync.Mutex
	// pods are the pods of the manifests, admitted or rejected, by UID.
	pods map[types.UID]*podEntry
	// working is what the engine held at the last housekeeping, with the
	// restarts and runtime-only kills that housekeeping added.
	working map[types.UID]worker.PodWorkerSync
	// lastHousekeeping is when housekeeping last finished (for /healthz).
	lastHousekeeping time.Time

	// runtimeReads is how housekeeping's runtime reads fare (for /healthz).
	runtimeReads runtimeReads
}

// New prepares the root directory, connects to the runtime (or starts the
// embedded one), builds the engine and opens the HTTP listener and the
// control socket. Nothing runs until Run.
func New(ctx context.Context, cfg config.Config, opts Options) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var err error
	if cfg.RootDir, err = prepareRootDir(cfg.RootDir); err != nil {
		return nil, err
	}
	bands, _ := cfg.ShutdownBands()
	a := &Agent{
		cfg: cfg, opts: opts, log: opts.Logger, clock: opts.Clock, registry: opts.Registry,
		shutdownRequested: make(chan struct{}), controlSocket: api.ControlSocket(cfg.RootDir),
		pods: map[types.UID]*podEntry{}, working: map[types.UID]worker.PodWorkerSync{},
		probeMetrics: prometheus.NewRegistry(),
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.clock == nil {
		a.clock = clock.RealClock{}
	}
	if a.registry == nil {
		a.registry = prometheus.NewRegistry()
		a.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	a.events = eventLog{log: a.log}
	lanes := cfg.Lanes()
	lanes.Observe = newLaneWait(a.registry)
	conn, err := connectRuntime(ctx, cfg.RuntimeEndpoint, cfg.RootDir, lanes)
	if err != nil {
		return nil, err
	}
	a.conn = conn
	switch m := conn.mounts; m.Visibility {
	case mount.Unknown:
		a.log.Warn("cannot check that the runtime sees the agent's mounts (volumes under the root directory); going on", "runtime", cfg.RuntimeEndpoint, "rootDir", cfg.RootDir, "why", m.Why)
	case mount.Visible:
		if cfg.RuntimeEndpoint != "" {
			a.log.Debug("the runtime sees the agent's mounts", "runtime", cfg.RuntimeEndpoint, "pid", m.PID, "why", m.Why)
		}
	}
	if a.devices, err = a.newDeviceManager(); err != nil {
		a.close()
		return nil, err
	}
	machine, machineErr := machineCapacity()
	allocatable, err := cfg.AllocatableResources(machine, machineErr)
	if err != nil {
		a.close()
		return nil, err
	}
	if cfg.Kubeconfig != "" {
		if machineErr != nil {
			a.close()
			return nil, fmt.Errorf("node capacity: %w", machineErr)
		}
		if a.cluster, err = a.connectCluster(ctx, machine, allocatable); err != nil {
			a.close()
			return nil, err
		}
		a.events.api = a.cluster.recorder(cfg.NodeName)
	}
	a.probes = a.newProber(conn.runtime)
	if a.statuses, err = a.newStatusManager(); err != nil {
		a.close()
		return nil, err
	}
	a.syncer = kuberuntime.NewSyncer(conn.runtime, conn.images, kuberuntime.Options{
		Statuses: deviceStatuses{a}, Events: a.events, Clock: a.clock, Logger: a.log,
		RuntimeName: conn.name, LogRoot: cfg.PodLogRoot(), PodsRoot: cfg.PodsRoot(), Probes: a.probes,
		Allocatable: downwardAllocatable(allocatable, cfg.RootDir), HostIPs: hostIPs(), MachineMemory: machine.Memory().Value(),
		VolumeAPI: a.volumeAPI(), Services: a.serviceLister(),
		Security: cfg.SecurityOptions(), RuntimeFeatures: conn.features, RuntimeClasses: a.runtimeClasses(),
		RestartBackoff: opts.RestartBackoff, MaxRestartBackoff: opts.MaxRestartBackoff,
		ClusterDNS: dns.Cluster{Servers: cfg.ClusterDNS, Domain: cfg.ClusterDomain},
		Devices:    a.devices,
	})
	if root := cfg.PodLogRoot(); root != "" {
		maxSize, _ := cfg.ContainerLogMaxBytes()
		a.rotator = logs.NewRotator(conn.poll, conn.service, root, a.clock, maxSize, cfg.ContainerLogMaxFiles)
	}
	a.cache = podcache.New(conn.poll, a.log)
	a.workers = worker.New(a.syncer, worker.Options{
		Clock: a.clock, ResyncInterval: cfg.SyncFrequency.Duration, StatusCache: a.cache, SyncersReadRuntime: true,
		Registerer: a.registry, Observer: engineObserver(opts.Observer, a.log, cfg.Verbosity), Logger: a.log, BackOffPeriod: opts.SyncBackOff, Recorder: a.events,
	})
	a.shutdown, err = shutdown.NewManager(shutdown.Config{
		Bands: bands, Killer: a.workers, Clock: a.clock, Recorder: a.events, Logger: a.log, Registerer: a.registry,
	})
	if err != nil {
		a.close()
		return nil, err
	}
	if a.admission, err = a.admissionChain(allocatable); err != nil {
		a.close()
		return nil, err
	}
	a.gauges = newPodGauges(a.registry)
	if cfg.StaticPodPath != "" {
		if a.source, err = manifests.NewSource(cfg.StaticPodPath, cfg.NodeName, a.clock); err != nil {
			a.close()
			return nil, err
		}
	}
	for _, w := range cfg.Deprecations() {
		a.log.Warn(w)
	}
	stats, err := a.statsProvider(opts)
	if err != nil {
		a.close()
		return nil, err
	}
	readOnly := cfg.ReadOnlyAddress()
	if opts.ReadOnlyAnyPort && readOnly == "" {
		readOnly = "127.0.0.1:0"
	}
	if a.server, err = server.Listen(a, server.Config{Address: readOnly, ControlSocket: a.controlSocket, Logger: a.log, Clock: a.clock,
		StatsRoutes: func(mux *http.ServeMux) { kubeletserver.StatsRoutes(mux, stats, a.probeMetrics, a.log) }}); err != nil {
		a.close()
		return nil, err
	}
	if err := a.listenKubeletAPI(opts, stats); err != nil {
		a.close()
		return nil, err
	}
	if err := a.listenHealthz(opts); err != nil {
		a.close()
		return nil, err
	}
	if err := a.devices.Start(); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// Addr is the address the read-only HTTP endpoint listens on.
func (a *Agent) Addr() string { return a.server.Addr() }

// ControlSocket is the path of the agent's control socket.
func (a *Agent) ControlSocket() string { return a.controlSocket }

// RuntimeEndpoint is the CRI endpoint the agent uses.
func (a *Agent) RuntimeEndpoint() string { return a.conn.endpoint }

// Embedded is the embedded runtime, nil with an external one.
func (a *Agent) Embedded() *embedded.Runtime { return a.conn.embedded }

// Registry holds the agent's metrics.
func (a *Agent) Registry() *prometheus.Registry { return a.registry }

// RequestShutdown starts a graceful node shutdown: Run kills the pods band
// by band, then returns nil.
func (a *Agent) RequestShutdown() {
	a.shutdownOnce.Do(func() { close(a.shutdownRequested) })
}

// KillPod stops the pod with the given UID, as a deletion with grace
// period override gracePeriod (nil: the pod's own) does, and waits until
// its containers stopped or ctx ends. A pod of a manifest stays stopped
// while its manifest is there: its UID finished.
func (a *Agent) KillPod(ctx context.Context, uid types.UID, gracePeriod *int64) error {
	a.mu.Lock()
	e, ok := a.pods[uid]
	a.mu.Unlock()
	if !ok || e.rejection != nil {
		return fmt.Errorf("kill pod %s: no admitted pod has this UID", uid)
	}
	return a.workers.KillPod(ctx, e.pod, false, gracePeriod, nil)
}

// Run runs the agent until ctx ends (SIGTERM or SIGINT: on a real runtime
// pods keep running, as when a kubelet stops, and the next agent adopts
// them; the embedded runtime ends with the agent) or a node shutdown
// asked for by hand (RequestShutdown) completes (pods are stopped, if
// graceful node shutdown is configured). A node shutdown announced by
// systemd-logind (watchLogind) stops the pods too, but Run goes on: the
// system stops the agent next, or logind cancels the shutdown.
func (a *Agent) Run(ctx context.Context) error {
	defer a.close()
	inner, stop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	a.server.Start()
	if a.kubeletAPI != nil {
		a.kubeletAPI.Start()
	}
	if a.healthz != nil {
		a.healthz.Start()
	}
	// The runtime is read before the first sync, so the engine's status
	// cache is filled; the manifests are read before the first
	// housekeeping, so their pods, found running, are not taken for orphans.
	if err := a.cache.Refresh(inner); err != nil {
		a.log.Warn("first runtime poll failed; syncs retry until one succeeds", "err", err)
	}
	a.scanManifests()
	a.housekeeping(inner)
	if a.source != nil {
		wg.Go(func() {
			every := a.cfg.FileCheckFrequency.Duration
			wake := a.source.Watch(inner, every, a.reportManifestError)
			a.source.Run(inner, every, wake, a.handleChangeLocking, a.reportManifestError)
		})
	}
	if a.cluster != nil {
		a.runCluster(inner, &wg)
	}
	wg.Go(func() { a.cache.Run(inner, a.cfg.RuntimePollInterval.Duration, a.clock, a.resyncChanged) })
	wg.Go(func() { a.runHousekeeping(inner) })
	if a.rotator != nil {
		wg.Go(func() { a.runLogRotation(inner) })
	}
	a.watchLogind(inner, &wg)
	a.log.Info("agent running", "node", a.cfg.NodeName, "runtime", a.conn.name, "endpoint", a.conn.endpoint,
		"manifests", a.cfg.StaticPodPath, "kubeconfig", a.cfg.Kubeconfig, "address", a.Addr(), "control", a.controlSocket, "kubeletAPI", a.KubeletAPIAddr())

	var err error
	shutdown := false
	select {
	case <-ctx.Done():
		a.log.Info("agent stopping; " + a.podsAfterExit())
	case <-a.shutdownRequested:
		shutdown = true
		err = a.nodeShutdown(inner)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a.server.Shutdown(shutdownCtx)
	if a.kubeletAPI != nil {
		a.kubeletAPI.Shutdown(shutdownCtx)
	}
	if a.healthz != nil {
		a.healthz.Shutdown(shutdownCtx)
	}
	stop()
	wg.Wait()
	// The probes first: a result arriving now would ask a stopping engine
	// for a sync.
	a.probes.Stop()
	a.workers.Stop()
	a.syncer.Close()
	if shutdown {
		a.flushStatuses()
	}
	return err
}

// flushStatuses writes the pods' last statuses to the API server before
// the agent exits after a node shutdown (the pods it stopped are Failed);
// the status manager's loop has stopped, and a node going down does not
// wait long.
func (a *Agent) flushStatuses() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownDrain)
	defer cancel()
	if err := a.statuses.Flush(ctx); err != nil {
		a.log.Warn("node shutdown: not every pod status reached the API server", "err", err)
	}
}

// nodeShutdown kills the active pods band by band. With graceful node
// shutdown disabled it stops nothing and returns at once, as the kubelet
// does: the node goes down with its pods.
func (a *Agent) nodeShutdown(ctx context.Context) error {
	if !a.shutdown.Enabled() {
		a.log.Warn("node shutdown requested, but graceful node shutdown is disabled (no shutdownGracePeriod configured): no pod is stopped; " + a.podsAfterExit())
		return nil
	}
	a.mu.Lock()
	active := a.activePodsLocked()
	a.mu.Unlock()
	a.log.Info("node shutdown: stopping pods", "pods", len(active))
	if a.cluster != nil {
		a.cluster.node.SetShuttingDown(ctx)
	}
	if err := a.shutdown.Shutdown(ctx, active); err != nil {
		return fmt.Errorf("node shutdown: %w", err)
	}
	a.drainKills(ctx, active)
	// The pod counts were last set while the pods ran: the agent's last
	// metrics must say what it leaves behind.
	a.housekeeping(ctx)
	a.log.Info("node shutdown complete")
	return nil
}

// ShutdownPlan says what a requested node shutdown does: stop the pods
// band by band, or, with graceful node shutdown disabled, nothing before
// the agent exits.
func (a *Agent) ShutdownPlan() string {
	if !a.shutdown.Enabled() {
		return "graceful node shutdown is disabled (no shutdownGracePeriod configured): the agent exits and stops no pod; " + a.podsAfterExit()
	}
	return "node shutdown started"
}

// podsAfterExit says what becomes of the pods when the agent exits without
// stopping them.
func (a *Agent) podsAfterExit() string {
	if a.conn.embedded != nil {
		return "its pods end with it: they run in the embedded runtime, inside the agent"
	}
	return "pods keep running in the runtime, as when a kubelet stops"
}

// shutdownDrain bounds the wait for the last kills after the last band.
const shutdownDrain = 5 * time.Second

// drainKills waits, up to shutdownDrain, until the engine finished the
// pods: their containers stopped and their sandboxes were cleaned up. A
// band ends when its period does, and the period is also its pods' grace:
// the last band's SIGKILLs are due just after it ends, and stopping the
// engine then would cancel them.
func (a *Agent) drainKills(ctx context.Context, pods []*v1.Pod) {
	tick := a.clock.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := a.clock.Now().Add(shutdownDrain)
	for {
		var running []string
		for _, p := range pods {
			if st, ok := a.workers.State(p.UID); ok && !st.IsFinished() {
				running = append(running, p.Namespace+"/"+p.Name)
			}
		}
		if len(running) == 0 {
			return
		}
		if !a.clock.Now().Before(deadline) {
			a.log.Warn("node shutdown: pods still stopping; the agent exits anyway", "pods", running)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
	}
}

// scanManifests reads the manifest directory once.
func (a *Agent) scanManifests() {
	if a.source == nil {
		return
	}
	changes, errs := a.source.Scan()
	for _, err := range errs {
		a.reportManifestError(err)
	}
	for _, ch := range changes {
		a.handleChangeLocking(ch)
	}
}

func (a *Agent) handleChangeLocking(ch kubetypes.Change) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ch.Path == "" {
		a.log.Info("API pod change", "op", ch.Op.String(), "pod", ch.Pod.Namespace+"/"+ch.Pod.Name, "uid", ch.Pod.UID)
	} else {
		a.log.Info("manifest change", "op", ch.Op.String(), "file", ch.Path, "pod", ch.Pod.Namespace+"/"+ch.Pod.Name, "uid", ch.Pod.UID)
	}
	a.handleChange(ch)
}

// reportManifestError logs a bad manifest, or a manifest directory that
// does not exist; the file is skipped and every other pod keeps running.
// The source reports a fault once, not at every scan; /lifecycle and
// `podlife status` show the faults that stand (manifestErrors).
func (a *Agent) reportManifestError(err error) {
	if isMissingDir(err) {
		a.log.Warn("the manifest directory does not exist: no static pod runs until it is created", "dir", a.source.Dir())
		return
	}
	a.log.Error("bad manifest skipped", "err", err)
}

func (a *Agent) close() {
	if a.cluster != nil {
		a.cluster.events.Shutdown() // after the last event: Run stopped the engine
		utilnet.CloseIdleConnectionsFor(a.cluster.http.Transport)
		if a.cluster.certs != nil {
			a.cluster.certs.Close()
		}
	}
	if a.server != nil {
		a.server.Close() // and removes the socket file
	}
	if a.kubeletAPI != nil {
		a.kubeletAPI.Close()
	}
	if a.healthz != nil {
		a.healthz.Close()
	}
	if a.devices != nil {
		a.devices.Stop()
	}
	a.conn.close()
}
