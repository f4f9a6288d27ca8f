package node

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/apimachinery/lease"
)

// Manager keeps one node's Node object and Lease. Its methods are safe for
// concurrent use; Run is called once.
type Manager struct {
	cfg       Config
	log       *slog.Logger
	labels    map[string]string
	addresses []v1.NodeAddress
	nodeInfo  v1.NodeSystemInfo

	// statusChange wakes the status loop when the readiness changed
	// outside of it (SetShuttingDown).
	statusChange chan struct{}
	mu           sync.Mutex
	node         *v1.Node // guarded by mu: the Node as the API last returned it; nil until registered
	// shutdown is the node shutdown under way, nil when none is (guarded
	// by mu).
	shutdown *shutdownWrite
}

// shutdownWrite is one node shutdown: written is closed once the status
// loop wrote a status that says the node is shutting down.
type shutdownWrite struct {
	written chan struct{}
	close   func() // closes written, once
}

// New returns a Manager for cfg. It reads the host's identity (machine-id,
// boot id, kernel, OS); what it cannot read is logged and left empty.
func New(cfg Config) (*Manager, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	addresses := cfg.Addresses
	if addresses == nil {
		if addresses, err = hostAddresses(cfg.NodeName, defaultHostIP); err != nil {
			return nil, err
		}
	}
	info, err := readSystemInfo("/", cfg.RuntimeVersion, cfg.AgentVersion)
	if err != nil {
		cfg.Logger.Warn("Some of the node's system info is unknown", "node", cfg.NodeName, "err", err)
	}
	return &Manager{
		cfg:          cfg,
		log:          cfg.Logger.With("node", cfg.NodeName),
		labels:       OwnLabels(cfg.NodeName, cfg.Labels),
		addresses:    addresses,
		nodeInfo:     info,
		statusChange: make(chan struct{}, 1),
	}, nil
}

// Addresses are the addresses the Node reports (the kubelet API's
// self-signed certificate and the serving certificate's CSR name them).
func (m *Manager) Addresses() []v1.NodeAddress { return append([]v1.NodeAddress(nil), m.addresses...) }

// Node returns a copy of the registered Node as the API last returned it,
// or false before the Node is registered.
func (m *Manager) Node() (*v1.Node, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.node == nil {
		return nil, false
	}
	return m.node.DeepCopy(), true
}

// shutdownWriteTimeout bounds how long a node shutdown waits for the Node
// to say so before it stops pods all the same (the API server away).
const shutdownWriteTimeout = 5 * time.Second

// SetShuttingDown says that a graceful node shutdown began: from now on the
// Node is not ready ("node is shutting down"). The status is written at
// once rather than at the next status update, and SetShuttingDown returns
// when it was (or after shutdownWriteTimeout, or when ctx ends), as the
// kubelet's shutdown manager syncs the node status before it stops pods:
// a shutdown quicker than the status loop would otherwise leave the Node
// Ready behind the exited agent.
func (m *Manager) SetShuttingDown(ctx context.Context) {
	m.mu.Lock()
	if m.shutdown == nil {
		written := make(chan struct{})
		m.shutdown = &shutdownWrite{written: written, close: sync.OnceFunc(func() { close(written) })}
	}
	sd := m.shutdown
	m.mu.Unlock()
	m.wakeStatusLoop()
	timer := m.cfg.Clock.NewTimer(shutdownWriteTimeout)
	defer timer.Stop()
	select {
	case <-sd.written:
	case <-timer.C():
		m.log.Warn("Stopping pods for node shutdown before the Node says so: its status was not written in time", "timeout", shutdownWriteTimeout)
	case <-ctx.Done():
	}
}

// ClearShuttingDown returns the node to service after a node shutdown was
// cancelled (logind's PrepareForShutdown(false)): the Node is Ready again
// at once, as the kubelet's manager has it after a cancellation.
func (m *Manager) ClearShuttingDown() {
	m.mu.Lock()
	m.shutdown = nil
	m.mu.Unlock()
	m.wakeStatusLoop()
}

// ResourcesChanged asks for a status update now: the device plugins'
// resources changed.
func (m *Manager) ResourcesChanged() { m.wakeStatusLoop() }

// wakeStatusLoop asks the status loop for an update now.
func (m *Manager) wakeStatusLoop() {
	select {
	case m.statusChange <- struct{}{}:
	default:
	}
}

// shutdownState is the node shutdown under way (nil: none) and whether one
// is.
func (m *Manager) shutdownState() (*shutdownWrite, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shutdown, m.shutdown != nil
}

// Run registers the Node, retrying with back-off, then renews its Lease
// and keeps its status until ctx ends. It returns when all of its work
// stopped.
func (m *Manager) Run(ctx context.Context) {
	if !m.register(ctx) {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { m.leaseController().Run(ctx) })
	m.keepStatus(ctx)
	wg.Wait()
}

// leaseController is the kubelet's: it creates the Lease once the Node
// exists, renews it every RenewInterval, and retries through apiserver
// outages (with back-off up to 7 s) without ever giving up.
func (m *Manager) leaseController() lease.Controller {
	return lease.NewController(m.cfg.Clock, m.cfg.Client, m.cfg.NodeName,
		int32(m.cfg.LeaseDuration/time.Second), nil, m.cfg.RenewInterval,
		m.cfg.NodeName, v1.NamespaceNodeLease, m.setLeaseOwner)
}

// setLeaseOwner makes the Node own its Lease, as the kubelet's
// SetNodeOwnerFunc does, so that deleting the Node deletes the Lease.
func (m *Manager) setLeaseOwner(l *coordinationv1.Lease) error {
	if len(l.OwnerReferences) > 0 {
		return nil
	}
	node, ok := m.Node()
	if !ok {
		return fmt.Errorf("node %s is not registered yet: no owner for lease %s/%s", m.cfg.NodeName, l.Namespace, l.Name)
	}
	l.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: v1.SchemeGroupVersion.Version,
		Kind:       "Node",
		Name:       node.Name,
		UID:        node.UID,
	}}
	return nil
}

// desired is what the Node should say now.
func (m *Manager) desired() desiredState {
	ok, reason, message := m.cfg.Ready()
	m.mu.Lock()
	shuttingDown := m.shutdown != nil
	m.mu.Unlock()
	capacity, allocatable := m.cfg.Capacity, m.cfg.Allocatable
	if m.cfg.DeviceResources != nil {
		devCapacity, devAllocatable := m.cfg.DeviceResources()
		capacity, allocatable = withResources(capacity, devCapacity), withResources(allocatable, devAllocatable)
	}
	return desiredState{
		labels:      m.labels,
		capacity:    capacity,
		allocatable: allocatable,
		addresses:   m.addresses,
		nodeInfo:    m.nodeInfo,
		kubeletPort: m.cfg.KubeletPort,
		handlers:    m.cfg.RuntimeHandlers,
		readiness:   readiness{shuttingDown: shuttingDown, ok: ok, reason: reason, message: message},
	}
}

// setNode records the Node the API returned.
func (m *Manager) setNode(node *v1.Node) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.node = node
}

// errorLog logs an error the first time it is seen in a row: a loop that
// retries does not repeat the same line every few seconds.
type errorLog struct {
	last string
}

// failed logs err unless it is the error logged last.
func (e *errorLog) failed(log *slog.Logger, msg string, err error) {
	if err.Error() == e.last {
		return
	}
	e.last = err.Error()
	log.Warn(msg, "err", err)
}

// succeeded says that the next error, whatever it is, is logged, and logs
// the recovery if an error was.
func (e *errorLog) succeeded(log *slog.Logger, msg string) {
	if e.last == "" {
		return
	}
	e.last = ""
	log.Info(msg)
}
