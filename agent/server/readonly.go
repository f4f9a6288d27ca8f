package server

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/podlife/podlife/agent/api"
)

// readOnlyHandler serves the read-only TCP endpoint (/metrics, /healthz,
// /pods, /lifecycle). Every route goes through tcpGuard; nothing on it
// changes the node (control is on the unix socket, see controlHandler).
func (s *Server) readOnlyHandler() http.Handler {
	mux := http.NewServeMux()
	s.readRoutes(mux)
	return tcpGuard(newHostCheck(s.tcp.Addr().String(), s.cfg.Address), s.cfg.ControlSocket, mux)
}

// readRoutes registers the routes of the TCP endpoint, reads only: a GET
// pattern also serves HEAD, and tcpGuard lets no other method through.
// Container logs are refused here: they are on the control socket.
//
// GET /pods is the kubelet's: a v1.PodList of the pods of the manifests
// (admitted or rejected), each with its spec and its latest status, so
// that tools made for the kubelet read it; every local user may read it,
// so it carries no env value, command or args (see redact.go). GET /lifecycle is podlife's own
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

// tcpGuard lets through to next only the requests a read-only endpoint
// should serve: those whose Host names it (a page of another site that
// rebinds its DNS name to 127.0.0.1 sends its own name), and only GET and
// HEAD (a form another site posts is neither).
func tcpGuard(hosts hostCheck, controlSocket string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hosts.allows(r.Host) {
			http.Error(w, fmt.Sprintf("host %q is not this endpoint's: use %s (requests for other host names are refused against DNS rebinding)",
				r.Host, hosts), http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, fmt.Sprintf("%s %s: this endpoint is read-only; control (POST /shutdown) is on the unix socket %s (podlife shutdown)",
				r.Method, r.URL.Path, controlSocket), http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostCheck accepts the Host headers that name a listener: the address it
// is bound to, the one it was configured with (a host name resolves to the
// bound address) or a loopback name, with its port.
type hostCheck struct {
	names map[string]bool // lower case, IPv6 without brackets
	port  string
}

// newHostCheck is the check of the listener bound to bound, configured as
// configured (its port may be 0: the bound one counts).
func newHostCheck(bound, configured string) hostCheck {
	host, port, _ := net.SplitHostPort(bound)
	c := hostCheck{names: map[string]bool{strings.ToLower(host): true, "localhost": true, "127.0.0.1": true, "::1": true}, port: port}
	if host, _, err := net.SplitHostPort(configured); err == nil && host != "" {
		c.names[strings.ToLower(host)] = true
	}
	return c
}

// allows reports whether a request with this Host header is for the
// listener. A Host without a port is for port 80, as an http URL is.
func (c hostCheck) allows(hostHeader string) bool {
	name, port, err := net.SplitHostPort(hostHeader)
	if err != nil {
		name, port = strings.TrimSuffix(strings.TrimPrefix(hostHeader, "["), "]"), "80"
	}
	return port == c.port && c.names[strings.ToLower(name)]
}

// String lists the accepted hosts, for the refusal's message.
func (c hostCheck) String() string {
	var hosts []string
	for name := range c.names {
		hosts = append(hosts, net.JoinHostPort(name, c.port))
	}
	sort.Strings(hosts)
	return strings.Join(hosts, ", ")
}
