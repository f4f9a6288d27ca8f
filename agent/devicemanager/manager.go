package devicemanager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sync"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"k8s.io/utils/clock"
)

// SocketName is the registration socket's name in the manager's directory
// (the kubelet's kubelet.sock: plugins dial it by that name).
const SocketName = "kubelet.sock"

// DirName is the manager's directory under the agent's root directory.
const DirName = "device-plugins"

// Config configures a Manager.
type Config struct {
	// Dir holds the registration socket and the plugins' sockets
	// (<root dir>/device-plugins).
	Dir    string
	Clock  clock.PassiveClock // nil: the real clock
	Logger *slog.Logger       // nil: no logs
	// OnChange is called, without the manager's lock, when the resources'
	// capacity or allocatable may have changed (the Node's status is
	// written sooner). nil: nothing.
	OnChange func()
	// OnHealth is called, without the manager's lock, with the pods
	// holding a device whose health changed (their statuses say so:
	// SetAllocatedResourcesStatus). nil: nothing.
	OnHealth func(pods []types.UID)
}

// Manager is the device manager. Its methods are safe for concurrent use.
type Manager struct {
	cfg Config
	log *slog.Logger

	mu    sync.Mutex
	state *state
	// plugins are the connected plugins, by socket path.
	plugins map[string]*plugin

	// ctx ends the plugins' ListAndWatch streams at Stop.
	ctx     context.Context
	cancel  context.CancelFunc
	server  *grpc.Server
	streams sync.WaitGroup

	pluginapi.UnsafeRegistrationServer
}

// plugin is one connected device plugin.
type plugin struct {
	resource string
	socket   string
	conn     *grpc.ClientConn
	api      pluginapi.DevicePluginClient
	opts     *pluginapi.DevicePluginOptions
}

// New returns a manager for cfg; nothing listens until Start.
func New(cfg Config) (*Manager, error) {
	if cfg.Dir == "" || !filepath.IsAbs(cfg.Dir) {
		return nil, fmt.Errorf("device plugins: the socket directory %q is not an absolute path", cfg.Dir)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.OnChange == nil {
		cfg.OnChange = func() {}
	}
	if cfg.OnHealth == nil {
		cfg.OnHealth = func([]types.UID) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{
		cfg: cfg, log: cfg.Logger.With("component", "devicemanager"),
		state: newState(), plugins: map[string]*plugin{},
		ctx: ctx, cancel: cancel,
	}, nil
}

// SocketPath is where plugins register.
func (m *Manager) SocketPath() string { return filepath.Join(m.cfg.Dir, SocketName) }

// Resources are the device plugins' resources as the Node says them:
// capacity every device, allocatable the healthy ones; a resource dropped
// after its plugin's grace period is 0 in both.
func (m *Manager) Resources() (capacity, allocatable v1.ResourceList) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.Clock.Now()
	if m.state.expire(now) {
		m.writeCheckpointLocked()
	}
	return m.state.capacity(now)
}

// Admit allocates the devices pod's containers ask for, after freeing
// those of the pods not in active (the pods that still hold node
// resources, without pod). A pod that already holds devices keeps them.
// The error is an *AdmissionError.
func (m *Manager) Admit(pod *v1.Pod, active []*v1.Pod) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.freeLocked(append(slices.Clone(active), pod), false)
	return m.allocateLocked(pod)
}

// allocateLocked plans pod's devices unless it holds some already.
func (m *Manager) allocateLocked(pod *v1.Pod) error {
	if m.state.hasPod(pod.UID) {
		return nil
	}
	plan, err := planPod(pod, poolOf(m.state))
	if err != nil {
		return &AdmissionError{Err: err}
	}
	for name, byResource := range plan {
		m.state.allocated[containerKey{pod.UID, name}] = byResource
	}
	if len(plan) > 0 {
		m.writeCheckpointLocked()
	}
	return nil
}

// Sweep frees the devices of the pods not in active. The caller knows
// every pod of its sources: the first Sweep after a restart frees the
// devices the checkpoint kept for pods that are gone, which admissions
// before it do not.
func (m *Manager) Sweep(active []*v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.freeLocked(active, true)
}

func (m *Manager) freeLocked(active []*v1.Pod, sweep bool) {
	keep := make(map[types.UID]bool, len(active))
	for _, p := range active {
		keep[p.UID] = true
	}
	if m.state.free(keep, sweep) {
		m.writeCheckpointLocked()
	}
}

// Devices returns the devices allocated to container c of pod uid, by
// resource (sorted IDs).
func (m *Manager) Devices(uid types.UID, c string) map[string][]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]string{}
	for name, ids := range m.state.allocated[containerKey{uid, c}] {
		out[name] = slices.Clone(ids)
	}
	return out
}

// AddDevices gives cfg, the CRI config of a new instance of container c
// of pod, what its devices' plugins answered to Allocate (asked once per
// container, at its first creation), after their PreStartContainer when a
// plugin asks for one (the kubelet's GetDeviceRunContainerOptions). A
// pod admitted before its resource's plugin registered is allocated now.
func (m *Manager) AddDevices(ctx context.Context, pod *v1.Pod, c *v1.Container, cfg *runtimeapi.ContainerConfig) error {
	key := containerKey{pod.UID, c.Name}
	type call struct {
		resource string
		ids      []string
		p        *plugin
		cached   *pluginapi.ContainerAllocateResponse
	}
	var calls []call
	m.mu.Lock()
	if !m.state.hasPod(pod.UID) && m.requestsDevicesLocked(c) {
		if err := m.allocateLocked(pod); err != nil {
			m.mu.Unlock()
			return err
		}
	}
	byResource := m.state.allocated[key]
	for _, name := range slices.Sorted(maps.Keys(byResource)) {
		cl := call{resource: name, ids: byResource[name], cached: m.state.responses[key][name]}
		if p := m.plugins[m.state.current(name)]; p != nil {
			cl.p = p
		} else if cl.cached == nil {
			m.mu.Unlock()
			return fmt.Errorf("device plugin of %s is not running: cannot allocate devices %v to container %s", name, cl.ids, c.Name)
		}
		calls = append(calls, cl)
	}
	m.mu.Unlock()

	responses := map[string]*pluginapi.ContainerAllocateResponse{}
	for _, cl := range calls {
		resp := cl.cached
		if resp == nil {
			var err error
			if resp, err = cl.p.allocate(ctx, cl.ids); err != nil {
				return fmt.Errorf("device plugin Allocate of %s for container %s: %w", cl.resource, c.Name, err)
			}
		}
		if cl.p != nil && cl.p.opts.GetPreStartRequired() {
			if err := cl.p.preStart(ctx, cl.ids); err != nil {
				return fmt.Errorf("device plugin PreStartContainer rpc failed with err: %w", err)
			}
		}
		responses[cl.resource] = resp
	}
	m.mu.Lock()
	if _, ok := m.state.allocated[key]; ok {
		if m.state.responses[key] == nil {
			m.state.responses[key] = map[string]*pluginapi.ContainerAllocateResponse{}
		}
		maps.Copy(m.state.responses[key], responses)
		m.writeCheckpointLocked()
	}
	m.mu.Unlock()
	applyResponses(cfg, responses)
	return nil
}

// requestsDevicesLocked reports whether c asks for a device plugin's
// resource.
func (m *Manager) requestsDevicesLocked(c *v1.Container) bool {
	for name, q := range c.Resources.Limits {
		if !q.IsZero() && m.state.isDeviceResource(string(name)) {
			return true
		}
	}
	return false
}

// allocate asks the plugin for devices ids of one container.
func (p *plugin) allocate(ctx context.Context, ids []string) (*pluginapi.ContainerAllocateResponse, error) {
	resp, err := p.api.Allocate(ctx, &pluginapi.AllocateRequest{
		ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: ids}},
	})
	if err != nil {
		return nil, err
	}
	if len(resp.GetContainerResponses()) == 0 {
		return nil, errors.New("no containers return in allocation response")
	}
	return resp.ContainerResponses[0], nil
}

// preStart calls the plugin's PreStartContainer with the kubelet's
// timeout.
func (p *plugin) preStart(ctx context.Context, ids []string) error {
	ctx, cancel := context.WithTimeout(ctx, pluginapi.KubeletPreStartContainerRPCTimeoutInSecs*timeSecond)
	defer cancel()
	_, err := p.api.PreStartContainer(ctx, &pluginapi.PreStartContainerRequest{DevicesIds: ids})
	return err
}

// pool is a devicePool over the state.
type pool struct{ s *state }

func poolOf(s *state) devicePool { return pool{s} }

func (p pool) isDeviceResource(name string) bool { return p.s.isDeviceResource(name) }

func (p pool) healthyFree(name string) ([]string, int, bool) {
	r := p.s.resources[name]
	if r == nil || r.devices == nil {
		return nil, 0, false
	}
	healthy := r.healthyIDs()
	used := p.s.inUse(name)
	return slices.DeleteFunc(slices.Clone(healthy), func(id string) bool { return used[id] }), len(healthy), true
}
