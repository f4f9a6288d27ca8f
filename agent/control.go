package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ControlSocketName is the control socket's name in the root directory.
const ControlSocketName = "podlife.sock"

// ControlSocket is the path of the control socket of the agent whose root
// directory is rootDir: HTTP on it serves the verbs that change the node
// (POST /shutdown), which the TCP endpoint does not.
func ControlSocket(rootDir string) string { return filepath.Join(rootDir, ControlSocketName) }

// maxSocketPath is the room in sun_path (108 bytes on Linux) less the NUL.
const maxSocketPath = 107

// listenControl opens the control socket at path, mode 0600: only the
// agent's user (and root) may connect. A socket left there by an agent
// that died is replaced; anything else is refused. The root directory is
// the agent's own and not writable by others (prepareRootDir), so nobody
// else can swap the file between the check and the replacement.
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

// controlHandler serves the control socket: POST /shutdown, GET
// /containerLogs (logs can hold secrets: only the agent's user and root
// may read them), and whatever control verb comes next. Every request
// goes through peerGuard.
func (a *Agent) controlHandler() http.Handler {
	mux := http.NewServeMux()
	a.containerLogRoutes(mux)
	mux.HandleFunc("POST /shutdown", func(w http.ResponseWriter, _ *http.Request) {
		a.RequestShutdown()
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintln(w, a.ShutdownPlan())
	})
	return a.peerGuard(mux)
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
func (a *Agent) peerGuard(next http.Handler) http.Handler {
	self := os.Geteuid()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := r.Context().Value(peerKey{}).(peer)
		if p.cred == nil {
			a.log.Error("control request refused: the peer's credentials are unknown", "method", r.Method, "path", r.URL.Path, "err", p.err)
			http.Error(w, "the agent cannot tell who you are", http.StatusForbidden)
			return
		}
		if !peerAllowed(p.cred.Uid, self) {
			a.log.Warn("control request refused", "method", r.Method, "path", r.URL.Path, "uid", p.cred.Uid, "pid", p.cred.Pid)
			http.Error(w, fmt.Sprintf("uid %d may not control this agent: it runs as uid %d", p.cred.Uid, self), http.StatusForbidden)
			return
		}
		a.log.Info("control request", "method", r.Method, "path", r.URL.Path, "uid", p.cred.Uid, "pid", p.cred.Pid)
		next.ServeHTTP(w, r)
	})
}

// controlClient is an HTTP client of the control socket at path. It keeps
// no idle connection.
func controlClient(path string) *http.Client {
	var d net.Dialer
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
		DisableKeepAlives: true,
	}}
}

// ShutdownNode asks the agent whose control socket is at path for a
// graceful node shutdown, as SIGTERM does, and returns its answer.
func ShutdownNode(ctx context.Context, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://podlife/shutdown", nil)
	if err != nil {
		return "", err
	}
	resp, err := controlClient(path).Do(req)
	if err != nil {
		return "", fmt.Errorf("agent control socket %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("agent control socket %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("agent control socket %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// WaitAgentExited waits until nothing answers on the control socket at
// path (the agent removes it as it exits), or ctx ends.
func WaitAgentExited(ctx context.Context, path string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "unix", path)
		switch {
		case err == nil:
			c.Close()
		case errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED):
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			return fmt.Errorf("agent control socket %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
