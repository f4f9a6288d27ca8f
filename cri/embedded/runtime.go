package embedded

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
)

// SocketName is the socket's name in the directory given to Start; short,
// because a unix socket path has at most maxSocketPath bytes.
const SocketName = "cri.sock"

// imageSize is the size every image reports.
const imageSize = 1 << 20

// maxSocketPath is the room in sun_path (108 bytes on Linux) less the NUL.
const maxSocketPath = 107

// Runtime is a running embedded CRI server.
type Runtime struct {
	fake   *fake.RemoteRuntime
	server *grpc.Server
	path   string
	served chan error // Serve's result, once it returned

	// mu serialises the calls, the hooks and the injected errors.
	mu       sync.Mutex
	injected map[string][]error

	stopOnce sync.Once
	stopErr  error
}

// Start serves a new, empty runtime on dir/SocketName. It creates dir (mode
// 0700: whoever can reach the socket drives the runtime) and replaces a
// socket left there by a process that died, but not one in use.
func Start(dir string) (*Runtime, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, SocketName)
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("embedded runtime: socket path %q is longer than %d bytes; choose a shorter directory", path, maxSocketPath)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("embedded runtime: %w", err)
	}

	r := &Runtime{
		fake:     fake.NewFakeRemoteRuntime(),
		path:     path,
		served:   make(chan error, 1),
		injected: map[string][]error{},
	}
	// The fake's Start would set this after serving began, unlocked.
	r.fake.RuntimeService.Lock()
	r.fake.RuntimeService.FakeStatus = &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: true},
	}}
	r.fake.RuntimeService.Unlock()
	// The CRI client rejects an image status of size 0, the fake's default.
	r.fake.ImageService.SetFakeImageSize(imageSize)

	// Our own server rather than the fake's Start: the fake's server takes
	// no interceptor, and its listener leaves the socket file behind.
	r.server = grpc.NewServer(
		grpc.ChainUnaryInterceptor(r.unary),
		grpc.ChainStreamInterceptor(r.stream),
		grpc.WaitForHandlers(true),
	)
	runtimeapi.RegisterRuntimeServiceServer(r.server, r.fake)
	runtimeapi.RegisterImageServiceServer(r.server, r.fake)
	go func() { r.served <- r.server.Serve(l) }()
	return r, nil
}

// removeStaleSocket removes path if it is a socket nobody answers on.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("embedded runtime: %s exists and is not a socket", path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("embedded runtime: %s is in use by another server", path)
	}
	return os.Remove(path)
}

// Endpoint is the address to give a CRI client: unix:// and the socket path.
func (r *Runtime) Endpoint() string { return "unix://" + r.path }

// Stop ends the calls in progress, closes the server and removes the socket;
// the runtime's state is lost. It reports a failure of the server, if any.
// Further calls do nothing and return the same.
func (r *Runtime) Stop() error {
	r.stopOnce.Do(func() {
		r.server.Stop() // closes the listener, which removes the socket file
		r.fake.Stop()   // its own server never served; this releases it
		if err := <-r.served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			r.stopErr = fmt.Errorf("embedded runtime: serve: %w", err)
		}
	})
	return r.stopErr
}
