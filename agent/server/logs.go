package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/cri/logs"
)

// Container logs are served on the control socket only: they can hold
// secrets, and the TCP endpoint is open to every local user (the kubelet's
// read-only port serves none either; its authenticated port does).

// containerLogRoutes registers /containerLogs on the control socket, in
// the kubelet's shape; the container may be left out of the path when the
// pod has one.
func (s *Server) containerLogRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+api.ContainerLogsPath+"/{namespace}/{pod}", s.serveContainerLogs)
	mux.HandleFunc("GET "+api.ContainerLogsPath+"/{namespace}/{pod}/{container}", s.serveContainerLogs)
}

// refuseContainerLogs answers /containerLogs on the TCP endpoint.
func refuseContainerLogs(controlSocket string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf("%s: container logs are not served on this endpoint, which every local user can read; they are on the control socket %s (mode 0600: the agent's user and root), e.g. with podlife logs",
			r.URL.Path, controlSocket), http.StatusForbidden)
	}
}

// serveContainerLogs serves GET /containerLogs/{namespace}/{pod}/{container}
// ?follow=&previous=&tailLines=&timestamps=&sinceSeconds=&sinceTime=&limitBytes=
func (s *Server) serveContainerLogs(w http.ResponseWriter, r *http.Request) {
	opts, previous, err := parseLogQuery(r.URL.Query(), s.cfg.Clock.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	log, err := s.host.ContainerLog(r.Context(), r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"), previous)
	if err != nil {
		code := http.StatusInternalServerError
		if _, ok := errors.AsType[*notFoundError](err); ok {
			code = http.StatusNotFound
		} else if le, ok := errors.AsType[*logs.LookupError](err); ok {
			code = http.StatusBadRequest
			if le.NotFound {
				code = http.StatusNotFound
			}
		}
		http.Error(w, err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	out := io.Writer(w)
	if f, ok := w.(http.Flusher); ok {
		out = flushWriter{w, f}
	}
	if err := log.Write(r.Context(), opts, out); err != nil && r.Context().Err() == nil {
		s.log.Warn("container log: the output ended early", "path", r.URL.Path, "err", err)
	}
}

// flushWriter sends every write at once: a follow's lines as they come.
type flushWriter struct {
	w io.Writer
	f http.Flusher
}

func (fw flushWriter) Write(p []byte) (int, error) {
	n, err := fw.w.Write(p)
	fw.f.Flush()
	return n, err
}

// notFoundError is a pod the agent does not run (404).
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

// NotFound is the error a host's ContainerLog returns for a pod it does
// not run: GET /containerLogs answers it with 404 and msg.
func NotFound(msg string) error { return &notFoundError{msg} }

// parseLogQuery reads the kubelet's /containerLogs query parameters.
func parseLogQuery(q url.Values, now time.Time) (logs.Options, bool, error) {
	opts := logs.Options{TailLines: -1}
	var previous bool
	var errs []error
	boolean := func(name string, to *bool) {
		if s := q.Get(name); s != "" {
			v, err := strconv.ParseBool(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s=%q is not a boolean", name, s))
			}
			*to = v
		}
	}
	integer := func(name string, to *int64, min int64) bool {
		s := q.Get(name)
		if s == "" {
			return false
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < min {
			errs = append(errs, fmt.Errorf("%s=%q must be an integer of at least %d", name, s, min))
			return false
		}
		*to = v
		return true
	}
	boolean("follow", &opts.Follow)
	boolean("previous", &previous)
	boolean("timestamps", &opts.Timestamps)
	integer("tailLines", &opts.TailLines, 0)
	integer("limitBytes", &opts.LimitBytes, 1)
	var sinceSeconds int64
	if integer("sinceSeconds", &sinceSeconds, 1) {
		opts.Since = now.Add(-time.Duration(sinceSeconds) * time.Second)
	}
	if s := q.Get("sinceTime"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("sinceTime=%q is not an RFC 3339 time", s))
		case q.Has("sinceSeconds"):
			errs = append(errs, errors.New("at most one of sinceTime and sinceSeconds may be given"))
		default:
			opts.Since = t
		}
	}
	return opts, previous, errors.Join(errs...)
}
