package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"github.com/podlife/podlife/agent/api"
)

// The kubelet's healthz port defaults (--healthz-port,
// --healthz-bind-address): kubeadm's [kubelet-check] polls
// http://127.0.0.1:10248/healthz.
const (
	DefaultHealthzPort        = 10248
	DefaultHealthzBindAddress = "127.0.0.1"
)

// HealthProblemer says what is wrong with the agent, "" when nothing is.
type HealthProblemer interface{ HealthProblem() string }

// healthz is GET /healthz: 200 "ok", or 500 saying what is wrong.
func healthz(host HealthProblemer) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if problem := host.HealthProblem(); problem != "" {
			http.Error(w, problem, http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "ok")
	}
}

// Healthz is the kubelet's healthz port: plain HTTP, unauthenticated, so
// it serves GET /healthz and nothing else (every other path is a 404).
type Healthz struct {
	listener net.Listener
	log      *slog.Logger
	http     *http.Server
	serving  sync.WaitGroup
}

// ListenHealthz opens the healthz listener on address (host:port).
func ListenHealthz(host HealthProblemer, address string, logger *slog.Logger) (*Healthz, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("healthz: listen on %s (--healthz-bind-address, --healthz-port; 0 turns it off): %w", address, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+api.HealthzPath, healthz(host))
	return &Healthz{listener: l, log: logger, http: NewHTTPServer(mux, 0, ShortAnswers)}, nil
}

// Addr is the address the healthz port listens on.
func (h *Healthz) Addr() string { return h.listener.Addr().String() }

// Start serves until Shutdown.
func (h *Healthz) Start() {
	h.serving.Go(func() {
		if err := h.http.Serve(h.listener); !errors.Is(err, http.ErrServerClosed) {
			h.log.Error("healthz port failed", "err", err)
		}
	})
}

// Shutdown stops serving, waiting until ctx ends for the requests in
// progress.
func (h *Healthz) Shutdown(ctx context.Context) {
	_ = h.http.Shutdown(ctx)
	h.serving.Wait()
}

// Close closes the listener, whether or not it was served.
func (h *Healthz) Close() { _ = h.listener.Close() }
