package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/podlife/podlife/agent/api"
)

// readOnlyHandler serves the read-only TCP endpoint, the kubelet's
// read-only port (/healthz, /pods, /metrics, the stats routes of
// Config.StatsRoutes, and podlife's /lifecycle). Every route goes through
// readOnly; nothing on it changes the node (control is on the unix
// socket, see controlHandler).
func (s *Server) readOnlyHandler() http.Handler {
	mux := http.NewServeMux()
	s.readRoutes(mux)
	if s.cfg.StatsRoutes != nil {
		s.cfg.StatsRoutes(mux)
	}
	return readOnly(s.cfg.ControlSocket, mux)
}

// readRoutes registers the routes of the TCP endpoint, reads only: a GET
// pattern also serves HEAD, and readOnly lets no other method through.
// Container logs are refused here: they are on the control socket.
//
// GET /pods is the kubelet's: a v1.PodList of the pods of the manifests
// (admitted or rejected), each with its spec and its latest status, so
// that tools made for the kubelet read it. Unlike the kubelet's it
// carries no env value, command or args (see redact.go): anyone who
// reaches the port may read it, and those may hold credentials; the
// authenticated kubelet API's /pods has them. GET /lifecycle is podlife's own
// view (api.Lifecycle): the engine's state of every pod it holds (orphans
// and runtime-only pods too, which are in no manifest), and the manifests
// it cannot use. It is an endpoint of its own rather than annotations on
// /pods because most of it describes no pod of the list, and because
// annotations are the manifest's: a pod's metadata stays what its file
// says.
func (s *Server) readRoutes(mux *http.ServeMux) {
	registry := s.host.Registry()
	mux.Handle("GET "+api.MetricsPath, promhttp.HandlerFor(registry, promhttp.HandlerOpts{Registry: registry}))
	mux.HandleFunc("GET "+api.HealthzPath, healthz(s.host))
	mux.HandleFunc("GET "+api.PodsPath, func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, redactedPodList(s.host.PodList())) })
	mux.HandleFunc("GET "+api.LifecyclePath, func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.host.Lifecycle()) })
	mux.HandleFunc("GET "+api.ContainerLogsPath+"/", refuseContainerLogs(s.cfg.ControlSocket))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// readOnly lets through to next only GET and HEAD (a form another site
// posts is neither), as the kubelet's read-only handlers, which are GET
// routes. The Host of a request is not checked, as the kubelet does not:
// the port is on the kubelet's address, every interface by default, so
// what a page of another site could read through a DNS name rebound to
// the node, any peer on the network reads directly; and the node e2e
// suite asks for http://<address>:<readOnlyPort>/stats/summary with
// address 0.0.0.0.
func readOnly(controlSocket string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, fmt.Sprintf("%s %s: this endpoint is read-only; control (POST /shutdown) is on the unix socket %s (podlife shutdown)",
				r.Method, r.URL.Path, controlSocket), http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}
