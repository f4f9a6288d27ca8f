package kubeletserver

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// The kubelet API's connections cost a client that does not authenticate
// little: there are at most MaxOpenConnections of them (more wait in the
// kernel's backlog until one closes), and one whose requests have not
// authenticated is closed after UnauthenticatedTimeout without a request,
// rather than the keep-alive idle timeout (90 s), which let one request
// every 90 s keep a connection open.

// DefaultMaxOpenConnections bounds the kubelet API's open connections: a
// node's legitimate clients (the API server's logs, exec, attach and
// port-forward streams, metrics-server, Prometheus) use a few dozen; each
// connection costs tens of KiB (its TLS and HTTP buffers, a goroutine).
const DefaultMaxOpenConnections = 500

// DefaultUnauthenticatedTimeout is how long a connection whose requests
// have not authenticated may stay idle or take to send a request's
// headers (and its TLS handshake).
const DefaultUnauthenticatedTimeout = 10 * time.Second

// trackingListener caps l's connections at max and wraps each in an
// authConn.
type trackingListener struct {
	net.Listener
	unauthenticated time.Duration
}

func limitListener(l net.Listener, max int, unauthenticated time.Duration) net.Listener {
	return trackingListener{Listener: netutil.LimitListener(l, max), unauthenticated: unauthenticated}
}

func (l trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ac := &authConn{Conn: c, unauthenticated: l.unauthenticated}
	// Until its first request's headers are read, net/http bounds the
	// handshake by its ReadHeaderTimeout; this bounds it as well.
	if err := ac.SetReadDeadline(time.Time{}); err != nil {
		_ = c.Close()
		return nil, err
	}
	return ac, nil
}

// authConn is a connection whose read deadlines are at most
// unauthenticated from when they are set until one of its requests
// authenticated: net/http sets one for each idle wait and each request's
// headers.
type authConn struct {
	net.Conn
	unauthenticated time.Duration

	mu            sync.Mutex
	authenticated bool
	// requested is the read deadline net/http asked for last.
	requested time.Time
}

func (c *authConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requested = t
	return c.Conn.SetReadDeadline(c.boundLocked(t))
}

func (c *authConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requested = t
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetReadDeadline(c.boundLocked(t))
}

// boundLocked is deadline t, bounded while the connection has not
// authenticated.
func (c *authConn) boundLocked(t time.Time) time.Time {
	if c.authenticated {
		return t
	}
	limit := time.Now().Add(c.unauthenticated)
	if t.IsZero() || t.After(limit) {
		return limit
	}
	return t
}

// authenticate lifts the bound: the read deadline is the one net/http
// asked for.
func (c *authConn) authenticate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.authenticated {
		return
	}
	c.authenticated = true
	_ = c.Conn.SetReadDeadline(c.requested)
}

type connKey struct{}

// withConn is http.Server's ConnContext: a request's context holds its
// authConn.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if ac, ok := c.(*authConn); ok {
		return context.WithValue(ctx, connKey{}, ac)
	}
	return ctx
}

// authenticated marks the connection of a request whose user
// authenticated.
func authenticated(ctx context.Context) {
	if ac, ok := ctx.Value(connKey{}).(*authConn); ok {
		ac.authenticate()
	}
}
