// Package deviceplugintest is a device plugin for tests, written against
// the v1beta1 API as the upstream node e2e suite's testdeviceplugin is: it
// records its calls, streams its devices on ListAndWatch, answers
// Allocate (by default with an env var, a mount, a device node and an
// annotation per device) and fails the calls it is told to.
package deviceplugintest

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// Plugin is one test device plugin, serving on a unix socket.
type Plugin struct {
	pluginapi.UnsafeDevicePluginServer

	socket string
	server *grpc.Server
	// Options are what GetDevicePluginOptions answers; set before
	// Register.
	Options *pluginapi.DevicePluginOptions
	// Answer makes the Allocate answer for one container's devices; set
	// before Register. Default: DefaultAnswer.
	Answer func(ids []string) *pluginapi.ContainerAllocateResponse

	mu      sync.Mutex
	calls   []string
	devices []*pluginapi.Device
	fail    map[string]error // method -> error it returns
	updates chan struct{}    // a device list or a failure to send
	allocs  [][]string       // the device IDs of each Allocate

	preStarts int
}

// Start serves a plugin with devices on socket name in dir (the device
// manager's directory), stopped when the test ends.
func Start(t testing.TB, dir, name string, devices ...*pluginapi.Device) *Plugin {
	t.Helper()
	p := &Plugin{
		socket: filepath.Join(dir, name), devices: devices, fail: map[string]error{},
		updates: make(chan struct{}, 16), Options: &pluginapi.DevicePluginOptions{}, Answer: DefaultAnswer,
	}
	ln, err := net.Listen("unix", p.socket)
	if err != nil {
		t.Fatal(err)
	}
	p.server = grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(p.server, p)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.server.Serve(ln)
	}()
	t.Cleanup(func() {
		p.server.Stop()
		<-done
	})
	return p
}

// Register asks the device manager at kubeletSocket to register p for
// resource.
func (p *Plugin) Register(kubeletSocket, resource string) error {
	conn, err := grpc.NewClient("unix:"+kubeletSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = pluginapi.NewRegistrationClient(conn).Register(context.Background(), &pluginapi.RegisterRequest{
		Version: pluginapi.Version, Endpoint: filepath.Base(p.socket), ResourceName: resource,
	})
	return err
}

func (p *Plugin) record(call string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, call)
	return p.fail[call]
}

// Calls are the plugin's calls so far, in order.
func (p *Plugin) Calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

// SetHealth sets the health of the devices with ids and streams the list.
func (p *Plugin) SetHealth(health string, ids ...string) {
	p.mu.Lock()
	for i, d := range p.devices {
		if slices.Contains(ids, d.ID) {
			p.devices[i] = &pluginapi.Device{ID: d.ID, Health: health}
		}
	}
	p.mu.Unlock()
	p.updates <- struct{}{}
}

// Fail makes every later call of method fail with err.
func (p *Plugin) Fail(method string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail[method] = err
}

// Stop stops serving: the open ListAndWatch stream ends.
func (p *Plugin) Stop() { p.server.Stop() }

// Allocations are the device IDs of each container Allocate asked for.
func (p *Plugin) Allocations() [][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.allocs)
}

// PreStarts is how many PreStartContainer calls the plugin had.
func (p *Plugin) PreStarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.preStarts
}

// FailListAndWatch makes the open ListAndWatch stream end with an error.
func (p *Plugin) FailListAndWatch() {
	p.mu.Lock()
	p.fail["ListAndWatch"] = errors.New("ListAndWatch failed")
	p.mu.Unlock()
	p.updates <- struct{}{}
}

func (p *Plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	if err := p.record("GetDevicePluginOptions"); err != nil {
		return nil, err
	}
	return p.Options, nil
}

func (p *Plugin) ListAndWatch(_ *pluginapi.Empty, stream pluginapi.DevicePlugin_ListAndWatchServer) error {
	if err := p.record("ListAndWatch"); err != nil {
		return err
	}
	for {
		p.mu.Lock()
		err := p.fail["ListAndWatch"]
		devices := slices.Clone(p.devices)
		p.mu.Unlock()
		if err != nil {
			return err
		}
		if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: devices}); err != nil {
			return err
		}
		select {
		case <-p.updates:
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
	}
}

func (p *Plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	if err := p.record("Allocate"); err != nil {
		return nil, err
	}
	resp := &pluginapi.AllocateResponse{}
	for _, r := range req.ContainerRequests {
		p.mu.Lock()
		p.allocs = append(p.allocs, slices.Clone(r.DevicesIds))
		p.mu.Unlock()
		resp.ContainerResponses = append(resp.ContainerResponses, p.Answer(r.DevicesIds))
	}
	return resp, nil
}

func (p *Plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	if err := p.record("PreStartContainer"); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.preStarts++
	p.mu.Unlock()
	return &pluginapi.PreStartContainerResponse{}, nil
}

func (p *Plugin) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return nil, p.record("GetPreferredAllocation")
}

// DefaultAnswer gives each device an env var DEVICE_<id>=on, a read-only
// mount of /var/dev-state/<id> at /dev-state/<id>, the device node
// /dev/null at /dev/test<id> and an annotation test.device/<id>.
func DefaultAnswer(ids []string) *pluginapi.ContainerAllocateResponse {
	c := &pluginapi.ContainerAllocateResponse{Envs: map[string]string{}, Annotations: map[string]string{}}
	for _, id := range ids {
		c.Envs["DEVICE_"+id] = "on"
		c.Mounts = append(c.Mounts, &pluginapi.Mount{ContainerPath: "/dev-state/" + id, HostPath: "/var/dev-state/" + id, ReadOnly: true})
		c.Devices = append(c.Devices, &pluginapi.DeviceSpec{ContainerPath: "/dev/test" + id, HostPath: "/dev/null", Permissions: "rw"})
		c.Annotations["test.device/"+id] = "allocated"
	}
	return c
}

// Devices are devices with ids, all of health.
func Devices(health string, ids ...string) []*pluginapi.Device {
	var out []*pluginapi.Device
	for _, id := range ids {
		out = append(out, &pluginapi.Device{ID: id, Health: health})
	}
	return out
}
