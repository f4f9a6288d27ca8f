package devicemanager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/apimachinery/pkg/util/validation"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

const timeSecond = time.Second

// maxSocketPath is the longest path of a unix socket on Linux (sun_path
// holds 108 bytes with the terminating NUL).
const maxSocketPath = 107

// dialTimeout bounds the connection to a registering plugin and its
// GetDevicePluginOptions (the kubelet's dial timeout).
const dialTimeout = 10 * time.Second

// Start creates the directory, removes the sockets a previous agent's
// plugins left there (they register again when kubelet.sock is made
// anew, as with the kubelet, which does the same), and serves the
// Registration service on kubelet.sock.
func (m *Manager) Start() error {
	if err := os.MkdirAll(m.cfg.Dir, 0o750); err != nil {
		return fmt.Errorf("device plugins: %w", err)
	}
	if err := removeSockets(m.cfg.Dir); err != nil {
		return fmt.Errorf("device plugins: %w", err)
	}
	if err := m.readCheckpoint(); err != nil {
		// As the kubelet: the agent runs on; the devices of running pods
		// may be handed out again.
		m.log.Error("Cannot read the device checkpoint; starting without it", "err", err)
		m.state = newState()
	}
	if len(m.SocketPath()) > maxSocketPath {
		// The root directory is too deep for a unix socket (tests' temporary
		// directories): the agent runs on without device plugins, which
		// could not reach it, and says so.
		m.log.Warn("Device plugins are off: the registration socket's path is longer than a unix socket allows", "path", m.SocketPath(), "max", maxSocketPath)
		return nil
	}
	ln, err := net.Listen("unix", m.SocketPath())
	if err != nil {
		return fmt.Errorf("device plugins: the registration socket: %w", err)
	}
	m.server = grpc.NewServer(grpc.WaitForHandlers(true))
	pluginapi.RegisterRegistrationServer(m.server, m)
	m.streams.Go(func() {
		if err := m.server.Serve(ln); err != nil {
			m.log.Error("The device plugin registration server stopped; no device plugin can register", "err", err)
		}
	})
	return nil
}

// Stop stops the registration server and the plugins' streams, and
// removes kubelet.sock. The resources stay as they were.
func (m *Manager) Stop() {
	m.cancel()
	if m.server == nil {
		return // never started: the socket, if any, is another agent's
	}
	m.server.Stop()
	m.streams.Wait()
	_ = os.Remove(m.SocketPath())
}

// removeSockets removes the unix sockets in dir (not its files or
// directories).
func removeSockets(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Register connects to the plugin that asks, reads its options and
// follows its ListAndWatch: the Registration service's one call.
func (m *Manager) Register(ctx context.Context, r *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	m.log.Info("Device plugin registering", "resource", r.ResourceName, "endpoint", r.Endpoint, "version", r.Version)
	if !slices.Contains(pluginapi.SupportedVersions[:], r.Version) {
		return nil, fmt.Errorf("requested API version %q is not supported by kubelet. Supported version is %q", r.Version, pluginapi.SupportedVersions)
	}
	if !isExtendedResourceName(r.ResourceName) {
		return nil, fmt.Errorf("the ResourceName %q is invalid", r.ResourceName)
	}
	if r.Endpoint == "" || filepath.IsAbs(r.Endpoint) || strings.Contains(r.Endpoint, "..") {
		return nil, fmt.Errorf("the endpoint %q is not a socket name in %s", r.Endpoint, m.cfg.Dir)
	}
	p, err := m.connect(ctx, r.ResourceName, filepath.Join(m.cfg.Dir, r.Endpoint))
	if err != nil {
		m.log.Warn("Device plugin not registered", "resource", r.ResourceName, "endpoint", r.Endpoint, "err", err)
		return nil, err
	}
	m.streams.Go(func() { m.follow(p) })
	return &pluginapi.Empty{}, nil
}

// connect dials the plugin at socket and asks for its options.
func (m *Manager) connect(ctx context.Context, resource, socket string) (*plugin, error) {
	conn, err := grpc.NewClient("unix:"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("failed to dial device plugin: %w", err)
	}
	p := &plugin{resource: resource, socket: socket, conn: conn, api: pluginapi.NewDevicePluginClient(conn)}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	if p.opts, err = p.api.GetDevicePluginOptions(ctx, &pluginapi.Empty{}, grpc.WaitForReady(true)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("failed to get device plugin options: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx.Err() != nil {
		conn.Close()
		return nil, errors.New("the device manager is stopping")
	}
	_, known := m.state.resources[resource]
	if _, ok := m.plugins[socket]; ok || !m.state.connect(resource, socket) {
		conn.Close()
		return nil, fmt.Errorf("device plugin already connected: %s", socket)
	}
	m.plugins[socket] = p
	if !known {
		m.writeCheckpointLocked()
	}
	return p, nil
}

// follow reads the plugin's ListAndWatch until it ends, then disconnects
// it for good: the kubelet does not call a plugin again whose stream
// ended; the plugin registers anew.
func (m *Manager) follow(p *plugin) {
	err := m.listAndWatch(p)
	if m.ctx.Err() == nil {
		m.log.Warn("ListAndWatch ended for device plugin; its devices are unhealthy until it registers again", "resource", p.resource, "socket", p.socket, "err", err)
	}
	m.mu.Lock()
	// Only while p is the socket's plugin: a plugin registered again on
	// the same socket is refused until then, so this never ends it.
	if m.plugins[p.socket] == p {
		delete(m.plugins, p.socket)
		m.state.disconnect(p.resource, p.socket, m.cfg.Clock.Now())
	}
	m.mu.Unlock()
	p.conn.Close()
	m.cfg.OnChange()
}

func (m *Manager) listAndWatch(p *plugin) error {
	stream, err := p.api.ListAndWatch(m.ctx, &pluginapi.Empty{})
	if err != nil {
		return err
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		m.mu.Lock()
		pods := m.state.listed(p.resource, p.socket, resp.Devices)
		m.mu.Unlock()
		m.log.Debug("Device plugin listed its devices", "resource", p.resource, "devices", len(resp.Devices))
		m.cfg.OnChange()
		if len(pods) > 0 {
			m.cfg.OnHealth(pods)
		}
	}
}

// isExtendedResourceName is the API's rule for an extended resource: a
// domain-qualified name outside kubernetes.io, valid as a quota name
// (requests.<name>).
func isExtendedResourceName(name string) bool {
	if !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/") || strings.HasPrefix(name, "requests.") {
		return false
	}
	return len(validation.IsQualifiedName("requests."+name)) == 0
}
