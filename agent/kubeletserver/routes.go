package kubeletserver

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/podlife/podlife/agent/server"
)

// The kubelet API's paths (pkg/kubelet/server).
const (
	HealthzPath         = "/healthz"
	PodsPath            = "/pods"
	MetricsPath         = "/metrics"
	ProbeMetricsPath    = "/metrics/probes"
	ResourceMetricsPath = "/metrics/resource"
	CadvisorMetricsPath = "/metrics/cadvisor"
	SummaryPath         = "/stats/summary"
	ContainerLogsPath   = "/containerLogs"
	ExecPath            = "/exec"
	AttachPath          = "/attach"
	PortForwardPath     = "/portForward"
	RunPath             = "/run"
)

// Handler is the kubelet API's routes behind authentication and
// authorization. A GET route also serves HEAD.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+HealthzPath, s.serveHealthz)
	if s.cfg.Configz != nil {
		mux.HandleFunc("GET "+ConfigzPath, s.serveConfigz)
	}
	mux.HandleFunc("GET "+PodsPath, func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.host.PodList()) })
	metrics := func(reg *prometheus.Registry) http.Handler {
		return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	}
	mux.Handle("GET "+MetricsPath, metrics(s.host.Registry()))
	StatsRoutes(mux, s.cfg.Stats, s.host.ProbeMetrics(), s.log)
	logs := server.ContainerLogs{Source: s.host, Clock: s.cfg.Clock, Log: s.log}
	mux.Handle("GET "+ContainerLogsPath+"/{namespace}/{pod}", logs)
	mux.Handle("GET "+ContainerLogsPath+"/{namespace}/{pod}/{container}", logs)
	for _, method := range []string{"GET ", "POST "} {
		for _, pod := range []string{"/{namespace}/{pod}", "/{namespace}/{pod}/{uid}"} {
			mux.HandleFunc(method+ExecPath+pod+"/{container}", s.serveExec)
			mux.HandleFunc(method+AttachPath+pod+"/{container}", s.serveAttach)
			mux.HandleFunc(method+PortForwardPath+pod, s.servePortForward)
		}
	}
	mux.HandleFunc("POST "+RunPath+"/{namespace}/{pod}/{container}", s.serveRun)
	mux.HandleFunc("POST "+RunPath+"/{namespace}/{pod}/{uid}/{container}", s.serveRun)
	return s.authFilter(mux)
}

// serveHealthz is GET /healthz: 200 "ok", or 500 saying what is wrong.
func (s *Server) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	if problem := s.host.HealthProblem(); problem != "" {
		http.Error(w, problem, http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(w, "ok")
}

// StatsRoutes registers on mux the routes of the probe and stats figures,
// which the kubelet serves on its read-only port too (its
// InstallAuthNotRequiredHandlers): GET /metrics/probes of probes, and
// GET /stats/summary[?only_cpu_and_memory=true] and /metrics/resource of
// stats (nil: 503, stats not available). log gets a summary's failure.
func StatsRoutes(mux *http.ServeMux, stats StatsProvider, probes *prometheus.Registry, log *slog.Logger) {
	mux.Handle("GET "+ProbeMetricsPath, promhttp.HandlerFor(probes, promhttp.HandlerOpts{Registry: probes}))
	mux.HandleFunc("GET "+CadvisorMetricsPath, noCadvisor)
	if stats == nil {
		mux.HandleFunc("GET "+ResourceMetricsPath, statsNotAvailable)
		mux.HandleFunc("GET "+SummaryPath, statsNotAvailable)
		return
	}
	resources := prometheus.NewRegistry()
	resources.MustRegister(stats.ResourceMetrics())
	mux.Handle("GET "+ResourceMetricsPath, promhttp.HandlerFor(resources, promhttp.HandlerOpts{Registry: resources}))
	mux.HandleFunc("GET "+SummaryPath, func(w http.ResponseWriter, r *http.Request) {
		summary, err := stats.Summary(r.Context(), r.URL.Query().Get("only_cpu_and_memory") == "true")
		if err != nil {
			log.Warn("stats summary failed", "err", err)
			http.Error(w, "stats summary: "+err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, summary)
	})
}

// noCadvisor answers /metrics/cadvisor: podlife has no cAdvisor. The
// answer is 404 with a reason, written as an exposition comment: a scraper
// reads it as no samples (the upstream node e2e suite's metrics parser
// never returns on a plain-text 404 body, prometheus/common v0.70).
func noCadvisor(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprintf(w, "# %s: podlife has no cAdvisor; container CPU and memory are at %s, the rest at %s\n", CadvisorMetricsPath, ResourceMetricsPath, SummaryPath)
}

// statsNotAvailable answers the stats endpoints of an agent without a
// stats provider: no figures rather than made-up ones.
func statsNotAvailable(w http.ResponseWriter, r *http.Request) {
	http.Error(w, r.URL.Path+": stats not available: this agent has no stats provider", http.StatusServiceUnavailable)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
