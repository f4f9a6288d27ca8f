package kubeletserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/agent/server"
)

// DefaultPort is the kubelet's --port.
const DefaultPort = 10250

// Config is the kubelet API's configuration.
type Config struct {
	// Address is the IP to listen on ("0.0.0.0": every interface, as the
	// kubelet's --address); Port its port (0 picks a free one, for tests:
	// the agent turns the server off for --port 0 before it gets here).
	Address string
	Port    int
	// NodeName is the node whose subresources requests are authorized
	// against (nodes/<NodeName>/proxy ...).
	NodeName string
	TLS      TLSConfig
	// Auth is the built authenticator and authorizer (BuildAuth; tests
	// inject their own).
	Auth *Auth
	// Stats serves /stats/summary and /metrics/resource; nil: they answer
	// 503.
	Stats  StatsProvider
	Logger *slog.Logger       // nil: no logs
	Clock  clock.PassiveClock // nil: the real clock
	// IdleTimeout closes a keep-alive connection with no request for
	// that long; 0: server.DefaultIdleTimeout, the kubelet's.
	IdleTimeout time.Duration
	// Configz is what GET /configz serves (config/kubeletconfig.FromAgent);
	// nil: no /configz.
	Configz *kubeletconfigv1beta1.KubeletConfiguration
}

// Server is the kubelet API, listening; nothing is served until Start.
type Server struct {
	host     Host
	cfg      Config
	auth     *Auth
	log      *slog.Logger
	listener net.Listener
	tls      *tls.Config

	http    *http.Server
	serving sync.WaitGroup
	stop    context.CancelFunc
}

// Listen prepares the serving certificate and opens the listener.
func Listen(host Host, cfg Config) (*Server, error) {
	s, err := newServer(host, cfg)
	if err != nil {
		return nil, err
	}
	if s.tls, err = serverTLS(cfg.TLS, s.log, s.cfg.Clock.Now()); err != nil {
		return nil, fmt.Errorf("kubelet API: %w", err)
	}
	address := net.JoinHostPort(cfg.Address, strconv.Itoa(cfg.Port))
	if s.listener, err = net.Listen("tcp", address); err != nil {
		return nil, fmt.Errorf("kubelet API: listen on %s (--address, --port): %w", address, err)
	}
	return s, nil
}

// newServer is the server of cfg, with its defaults, not listening.
func newServer(host Host, cfg Config) (*Server, error) {
	if cfg.Auth == nil || cfg.Auth.Authenticator == nil || cfg.Auth.Authorizer == nil {
		return nil, errors.New("kubelet API: no authenticator and authorizer (BuildAuth)")
	}
	s := &Server{host: host, cfg: cfg, auth: cfg.Auth, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.cfg.Clock == nil {
		s.cfg.Clock = clock.RealClock{}
	}
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Start serves until Shutdown, and reloads the client CA file meanwhile.
func (s *Server) Start() {
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	if s.auth.run != nil {
		s.serving.Go(func() { s.auth.run(ctx) })
	}
	// The kubelet's timeouts: idle keep-alive connections closed, a
	// request's headers bounded, and every request, a follow or a stream
	// too, ended after server.KubeletStreamTimeout.
	s.http = server.NewHTTPServer(s.Handler(), s.cfg.IdleTimeout, server.Answers(server.KubeletStreamTimeout))
	s.http.TLSConfig = s.tls
	// Follows and streams end as the server shuts down, which would
	// otherwise wait for them.
	s.http.BaseContext = func(net.Listener) context.Context { return ctx }
	s.http.RegisterOnShutdown(stop)
	s.serving.Go(func() {
		if err := s.http.ServeTLS(s.listener, "", ""); !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("kubelet API failed", "err", err)
		}
	})
}

// Shutdown stops serving, waiting until ctx ends for the requests in
// progress.
func (s *Server) Shutdown(ctx context.Context) {
	if s.http == nil {
		return
	}
	_ = s.http.Shutdown(ctx)
	s.stop()
	s.serving.Wait()
}

// Close closes the listener, whether or not it was served.
func (s *Server) Close() { _ = s.listener.Close() }
