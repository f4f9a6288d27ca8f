package kubeletserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
	// MaxOpenConnections caps the open connections (conns.go); 0:
	// DefaultMaxOpenConnections.
	MaxOpenConnections int
	// UnauthenticatedTimeout closes a connection none of whose requests
	// authenticated once it was idle that long; 0:
	// DefaultUnauthenticatedTimeout.
	UnauthenticatedTimeout time.Duration
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

	// authFailures counts the requests refused for their credentials,
	// whose log lines failureLog thins out.
	authFailures *prometheus.CounterVec
	failureLog   *sometimes
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
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("kubelet API: listen on %s (--address, --port): %w", address, err)
	}
	s.listener = limitListener(listener, s.cfg.MaxOpenConnections, s.cfg.UnauthenticatedTimeout)
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
	if s.cfg.MaxOpenConnections <= 0 {
		s.cfg.MaxOpenConnections = DefaultMaxOpenConnections
	}
	if s.cfg.UnauthenticatedTimeout <= 0 {
		s.cfg.UnauthenticatedTimeout = DefaultUnauthenticatedTimeout
	}
	s.failureLog = newSometimes(failureLogBurst, failureLogEvery)
	s.authFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "podlife", Subsystem: "kubelet_api", Name: "authentication_failures_total",
		Help: "Requests to the kubelet API refused before authorization, by reason: unauthorized (no or wrong credentials, or the review failed), too_many_reviews (refused at once, 429), canceled (the client left during the review).",
	}, []string{"reason"})
	if reg := host.Registry(); reg != nil {
		if err := reg.Register(s.authFailures); err != nil {
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				return nil, fmt.Errorf("kubelet API: %w", err)
			}
			s.authFailures = already.ExistingCollector.(*prometheus.CounterVec)
		}
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
	s.http.ConnContext = withConn
	// net/http logs each failed TLS handshake (a client that connects and
	// says nothing, or garbage): through the agent's log, thinned as the
	// failed authentications are.
	s.http.ErrorLog = log.New(serverErrors{s: s, thin: newSometimes(failureLogBurst, failureLogEvery)}, "", 0)
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

// serverErrors writes net/http's error lines to the server's log, a
// burst then one every failureLogEvery, counting those left out.
type serverErrors struct {
	s    *Server
	thin *sometimes
}

func (e serverErrors) Write(p []byte) (int, error) {
	if left, ok := e.thin.allow(); ok {
		e.s.log.Info("kubelet API: "+strings.TrimSpace(string(p)), "leftOut", left)
	}
	return len(p), nil
}
