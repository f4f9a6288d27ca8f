// Package server is the node agent's two HTTP servers: the control socket
// (a unix socket, mode 0600, whose peers are checked by their credentials:
// GET /lifecycle, POST /shutdown and GET /containerLogs) and, when turned
// on, the read-only TCP endpoint, the kubelet's read-only port (GET
// /metrics, /healthz, /pods with no env value, command or args, the stats
// routes, /lifecycle; any other method is refused). Both close idle connections (see timeouts.go). The
// kubelet's healthz port, GET /healthz only, is a third (healthz.go). The handlers ask the agent what they
// serve through HostInterface; the agent constructs the servers with
// itself as the host. Its kubelet counterpart is pkg/kubelet/server and its
// HostInterface. The routes and what they return are agent/api's.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/cri/logs"
)

// HostInterface is what the servers' handlers need of the agent.
type HostInterface interface {
	// Registry holds the metrics of GET /metrics.
	Registry() *prometheus.Registry
	// HealthProblem says what is wrong with the agent, "" when nothing
	// is (GET /healthz).
	HealthProblem() string
	// PodList is GET /pods: the pods of the manifests, in the kubelet's
	// shape.
	PodList() *v1.PodList
	// Lifecycle is GET /lifecycle.
	Lifecycle() api.Lifecycle
	// ContainerLog finds the log of a container of the pod
	// namespace/name (container "": its only one), of its previous
	// instance if previous. An error made by NotFound is a 404, a
	// logs.LookupError a 400 or a 404.
	ContainerLog(ctx context.Context, namespace, name, container string, previous bool) (*logs.ContainerLog, error)
	// RequestShutdown starts a graceful node shutdown (POST /shutdown);
	// ShutdownPlan says what it does, the verb's answer.
	RequestShutdown()
	ShutdownPlan() string
}

// Config says where the servers listen.
type Config struct {
	// Address is the read-only TCP endpoint's address (the kubelet's
	// address and readOnlyPort). "": no TCP endpoint, as the kubelet's
	// readOnlyPort 0.
	Address string
	// StatsRoutes registers the routes of the probe and stats figures
	// the kubelet serves read-only too (agent/kubeletserver.StatsRoutes:
	// /metrics/probes, /metrics/resource, /stats/summary); nil: none.
	StatsRoutes func(*http.ServeMux)
	// ControlSocket is the path of the control socket.
	ControlSocket string
	Logger        *slog.Logger       // nil: no logs
	Clock         clock.PassiveClock // nil: the real clock (sinceSeconds of the container logs)
	// IdleTimeout closes a keep-alive connection with no request for
	// that long; 0: DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// Server is the two servers of an agent, listening; nothing is served
// until Start.
type Server struct {
	host    HostInterface
	cfg     Config
	log     *slog.Logger
	tcp     net.Listener // nil: the TCP endpoint is off
	control *net.UnixListener

	tcpServer, controlServer *http.Server
	serving                  sync.WaitGroup
}

// Listen opens the control socket, and the TCP listener if cfg.Address
// is set.
func Listen(host HostInterface, cfg Config) (*Server, error) {
	s := &Server{host: host, cfg: cfg, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.cfg.Clock == nil {
		s.cfg.Clock = clock.RealClock{}
	}
	var err error
	if cfg.Address != "" {
		if s.tcp, err = net.Listen("tcp", cfg.Address); err != nil {
			return nil, fmt.Errorf("listen on %s: %w", cfg.Address, err)
		}
	}
	if s.control, err = listenControl(cfg.ControlSocket); err != nil {
		if s.tcp != nil {
			_ = s.tcp.Close()
		}
		return nil, err
	}
	return s, nil
}

// Addr is the address the read-only TCP endpoint listens on, "" when it
// is off.
func (s *Server) Addr() string {
	if s.tcp == nil {
		return ""
	}
	return s.tcp.Addr().String()
}

// Start serves the endpoints until Shutdown.
func (s *Server) Start() {
	// A log follow in progress ends as the control server shuts down,
	// which would otherwise wait for it.
	requests, endRequests := context.WithCancel(context.Background())
	s.controlServer = NewHTTPServer(s.controlHandler(), s.cfg.IdleTimeout, Streams)
	s.controlServer.ConnContext = withPeer
	s.controlServer.BaseContext = func(net.Listener) context.Context { return requests }
	s.controlServer.RegisterOnShutdown(endRequests)
	if s.tcp != nil {
		s.tcpServer = NewHTTPServer(s.readOnlyHandler(), s.cfg.IdleTimeout, ShortAnswers)
		s.serving.Go(func() {
			if err := s.tcpServer.Serve(s.tcp); !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("HTTP endpoint failed", "err", err)
			}
		})
	}
	s.serving.Go(func() {
		if err := s.controlServer.Serve(s.control); !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("control socket failed", "err", err)
		}
	})
}

// Shutdown stops serving, waiting until ctx ends for the requests in
// progress, and returns once both servers stopped.
func (s *Server) Shutdown(ctx context.Context) {
	if s.controlServer == nil {
		return
	}
	if s.tcpServer != nil {
		_ = s.tcpServer.Shutdown(ctx)
	}
	_ = s.controlServer.Shutdown(ctx)
	s.serving.Wait()
}

// Close closes the listeners (and removes the socket file), whether or
// not they were served.
func (s *Server) Close() {
	if s.tcp != nil {
		_ = s.tcp.Close()
	}
	_ = s.control.Close()
}
