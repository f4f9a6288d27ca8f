package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/podlife/podlife/agent/api"
)

// maxSocketPath is the room in sun_path (108 bytes on Linux) less the NUL.
const maxSocketPath = 107

// listenControl opens the control socket at path, mode 0600: only the
// agent's user (and root) may connect. A socket left there by an agent
// that died is replaced; anything else is refused. The root directory is
// the agent's own and not writable by others (the agent checks it before),
// so nobody else can swap the file between the check and the replacement.
func listenControl(path string) (*net.UnixListener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("control socket path %q is longer than %d bytes; choose a shorter root directory", path, maxSocketPath)
	}
	if err := removeStaleControlSocket(path); err != nil {
		return nil, err
	}
	lc := net.ListenConfig{Control: ownerOnlyBeforeBind}
	l, err := lc.Listen(context.Background(), "unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return l.(*net.UnixListener), nil
}

// ownerOnlyBeforeBind gives the socket mode 0600 before it is bound: Linux
// creates the socket file with the socket's mode less the umask, so the
// file is never more open than 0600, not even for a moment, whatever the
// umask.
func ownerOnlyBeforeBind(_, _ string, c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) { err = unix.Fchmod(int(fd), 0o600) }); cerr != nil {
		return cerr
	}
	if err != nil {
		return fmt.Errorf("control socket: chmod before bind: %w", err)
	}
	return nil
}

// removeStaleControlSocket removes the socket at path if the agent's user
// owns it and nobody answers on it.
func removeStaleControlSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("control socket %s exists and is not a socket (mode %s); remove it", path, fi.Mode())
	}
	if owner := fi.Sys().(*syscall.Stat_t).Uid; int(owner) != os.Geteuid() {
		return fmt.Errorf("control socket %s is owned by uid %d, not by the agent's uid %d; remove it", path, owner, os.Geteuid())
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("control socket %s is in use: another agent runs with root directory %s", path, filepath.Dir(path))
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("control socket: remove the stale one: %w", err)
	}
	return nil
}

// controlHandler serves the control socket: GET /lifecycle (podlife
// status: the TCP endpoint is off by default), POST /shutdown, GET
// /containerLogs (logs can hold secrets: only the agent's user and root
// may read them), and whatever control verb comes next. Every request
// goes through peerGuard.
func (s *Server) controlHandler() http.Handler {
	mux := http.NewServeMux()
	s.containerLogRoutes(mux)
	mux.HandleFunc("GET "+api.LifecyclePath, func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.host.Lifecycle()) })
	mux.HandleFunc("POST "+api.ShutdownPath, func(w http.ResponseWriter, _ *http.Request) {
		s.host.RequestShutdown()
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintln(w, s.host.ShutdownPlan())
	})
	return s.peerGuard(mux)
}

// peerKey is the context key of a control connection's peer.
type peerKey struct{}

// peer is who is at the other end of a control connection, as the kernel
// says (SO_PEERCRED), or why that is unknown.
type peer struct {
	cred *unix.Ucred
	err  error
}

// withPeer is the control server's ConnContext: it reads the peer's
// credentials once per connection.
func withPeer(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, peerKey{}, peerOf(c))
}

func peerOf(c net.Conn) peer {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return peer{err: fmt.Errorf("%T is not a unix socket connection", c)}
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return peer{err: err}
	}
	var p peer
	if err := raw.Control(func(fd uintptr) { p.cred, p.err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return peer{err: err}
	}
	return p
}

// peerAllowed reports whether a peer with uid may control an agent run by
// agentUID: that user, or root.
func peerAllowed(uid uint32, agentUID int) bool { return uid == 0 || int(uid) == agentUID }

// peerGuard logs who asked for each control request, and refuses the
// peers that are neither the agent's user nor root. The socket's mode
// already keeps them out; this holds should it ever be opened up.
func (s *Server) peerGuard(next http.Handler) http.Handler {
	self := os.Geteuid()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := r.Context().Value(peerKey{}).(peer)
		if p.cred == nil {
			s.log.Error("control request refused: the peer's credentials are unknown", "method", r.Method, "path", r.URL.Path, "err", p.err)
			http.Error(w, "the agent cannot tell who you are", http.StatusForbidden)
			return
		}
		if !peerAllowed(p.cred.Uid, self) {
			s.log.Warn("control request refused", "method", r.Method, "path", r.URL.Path, "uid", p.cred.Uid, "pid", p.cred.Pid)
			http.Error(w, fmt.Sprintf("uid %d may not control this agent: it runs as uid %d", p.cred.Uid, self), http.StatusForbidden)
			return
		}
		s.log.Info("control request", "method", r.Method, "path", r.URL.Path, "uid", p.cred.Uid, "pid", p.cred.Pid)
		next.ServeHTTP(w, r)
	})
}
