package embedded

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// SocketName is the socket's name in the directory given to Start; short,
// because a unix socket path has at most maxSocketPath bytes.
const SocketName = "cri.sock"

// maxSocketPath is the room in sun_path (108 bytes on Linux) less the NUL.
const maxSocketPath = 107

// Runtime is a running embedded CRI server.
type Runtime struct {
	svc    *service
	server *grpc.Server
	path   string
	served chan error // Serve's result, once it returned

	stopOnce sync.Once
	stopErr  error

	// execHook runs before each ExecSync, outside the lock (SetExecHook).
	execHook atomic.Pointer[ExecHook]
}

// ExecHook is what an ExecSync does before it succeeds (the embedded
// runtime runs no process): a test's exec probe or hook that hangs until
// ctx (the call's) ends, or fails. An error fails the call with it.
type ExecHook func(ctx context.Context, containerID string, cmd []string) error

// SetExecHook makes every ExecSync run hook first, outside the lock that
// serialises the runtime's calls, so that it may block; nil: none.
func (r *Runtime) SetExecHook(hook ExecHook) {
	if hook == nil {
		r.execHook.Store(nil)
		return
	}
	r.execHook.Store(&hook)
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

	r := &Runtime{svc: newService(), path: path, served: make(chan error, 1)}
	r.server = grpc.NewServer(
		grpc.ChainUnaryInterceptor(r.unary),
		grpc.ChainStreamInterceptor(r.stream),
		grpc.WaitForHandlers(true),
	)
	runtimeapi.RegisterRuntimeServiceServer(r.server, r.svc)
	runtimeapi.RegisterImageServiceServer(r.server, r.svc)
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
		if err := <-r.served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			r.stopErr = fmt.Errorf("embedded runtime: serve: %w", err)
		}
	})
	return r.stopErr
}

// unary and stream run every call of the server through guard.
func (r *Runtime) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if hook := r.execHook.Load(); hook != nil {
		if exec, ok := req.(*runtimeapi.ExecSyncRequest); ok {
			if err := (*hook)(ctx, exec.ContainerId, exec.Cmd); err != nil {
				return nil, err
			}
		}
	}
	return r.guard(info.FullMethod, func() (any, error) { return handler(ctx, req) })
}

func (r *Runtime) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	_, err := r.guard(info.FullMethod, func() (any, error) { return nil, handler(srv, ss) })
	return err
}

// guard runs one call alone: it fails the call if an error was injected
// for the method, words an unimplemented method's error, and turns a panic
// into an Internal error rather than the end of the agent.
func (r *Runtime) guard(fullMethod string, call func() (any, error)) (resp any, err error) {
	method := path.Base(fullMethod)
	s := r.svc
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, status.Errorf(codes.Internal, "embedded runtime: %s: %v", method, p)
		}
	}()
	if errs := s.injected[method]; len(errs) > 0 {
		if len(errs) == 1 {
			delete(s.injected, method)
		} else {
			s.injected[method] = errs[1:]
		}
		return nil, errs[0]
	}
	resp, err = call()
	if status.Code(err) == codes.Unimplemented {
		err = unimplemented(method)
	}
	return resp, err
}
