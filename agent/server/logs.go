package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

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
	h := ContainerLogs{Source: s.host, Clock: s.cfg.Clock, Log: s.log}
	mux.Handle("GET "+api.ContainerLogsPath+"/{namespace}/{pod}", h)
	mux.Handle("GET "+api.ContainerLogsPath+"/{namespace}/{pod}/{container}", h)
}

// LogSource finds a container's log (HostInterface.ContainerLog).
type LogSource interface {
	ContainerLog(ctx context.Context, namespace, name, container string, previous bool) (*logs.ContainerLog, error)
}

// ContainerLogs serves GET /containerLogs/{namespace}/{pod}/{container},
// the kubelet's: the control socket and the kubelet API
// (agent/kubeletserver) both serve it. Its routes must name the path
// values namespace, pod and container.
type ContainerLogs struct {
	Source LogSource
	Clock  clock.PassiveClock // sinceSeconds counts back from its now
	Log    *slog.Logger       // a follow that ended early; nil: not logged
}

// refuseContainerLogs answers /containerLogs on the TCP endpoint.
func refuseContainerLogs(controlSocket string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf("%s: container logs are not served on this endpoint, which every local user can read; they are on the control socket %s (mode 0600: the agent's user and root), e.g. with podlife logs",
			r.URL.Path, controlSocket), http.StatusForbidden)
	}
}

// ServeHTTP serves GET /containerLogs/{namespace}/{pod}/{container}
// ?follow=&previous=&tailLines=&timestamps=&sinceSeconds=&sinceTime=&limitBytes=
func (s ContainerLogs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	opts, previous, err := parseLogQuery(r.URL.Query(), s.Clock.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	log, err := s.Source.ContainerLog(r.Context(), r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"), previous)
	if err != nil {
		code := http.StatusInternalServerError
		if r.Context().Err() != nil {
			// The request was cut (the client left, or the agent is
			// stopping) while the log was looked up: no fault of the
			// server's, and the caller may ask again.
			code = http.StatusServiceUnavailable
			err = fmt.Errorf("the request ended before the log was found (the agent may be stopping): %w", err)
		} else if _, ok := errors.AsType[*notFoundError](err); ok {
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
	if err := log.Write(r.Context(), opts, out); err != nil && r.Context().Err() == nil && s.Log != nil {
		s.Log.Warn("container log: the output ended early", "path", r.URL.Path, "err", err)
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

// NotFound marks the error as a missing pod for every server that maps
// errors to statuses by this method (the kubelet API's too).
func (e *notFoundError) NotFound() bool { return true }

// NotFound is the error a host's ContainerLog returns for a pod it does
// not run: GET /containerLogs answers it with 404 and msg.
func NotFound(msg string) error { return &notFoundError{msg} }

// maxSinceSeconds bounds sinceSeconds: a larger value means "all of it"
// and is clamped, so that it makes a time.Duration without overflow.
// tailLines needs no bound: the log reader counts lines, and keeps none.
const maxSinceSeconds = math.MaxInt64 / int64(time.Second)

// parseLogQuery reads the kubelet's /containerLogs query parameters and
// validates them as the API server validates a PodLogOptions
// (ValidatePodLogOptions, in its words): tailLines >= 0, limitBytes >= 1,
// sinceSeconds >= 1, not both sinceSeconds and sinceTime, no stream (the
// kubelet's PodLogsQuerySplitStreams gate is alpha, off). Every error
// names its parameter; a number that is no int64 is refused, a huge
// sinceSeconds clamped. tail is the kubelet's older name of tailLines
// ("all": every line).
func parseLogQuery(q url.Values, now time.Time) (logs.Options, bool, error) {
	opts := logs.Options{TailLines: -1}
	var previous bool
	var errs field.ErrorList
	boolean := func(name string, to *bool) {
		if s := q.Get(name); s != "" {
			v, err := strconv.ParseBool(s)
			if err != nil {
				errs = append(errs, field.Invalid(field.NewPath(name), s, "must be a boolean"))
			}
			*to = v
		}
	}
	integer := func(name, s string, to *int64, min int64, msg string) bool {
		if s == "" {
			return false
		}
		v, err := strconv.ParseInt(s, 10, 64)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath(name), s, fmt.Sprintf("must be an integer from %d to %d", min, int64(math.MaxInt64))))
			return false
		case v < min:
			errs = append(errs, field.Invalid(field.NewPath(name), v, msg))
			return false
		}
		*to = v
		return true
	}
	boolean("follow", &opts.Follow)
	boolean("previous", &previous)
	boolean("timestamps", &opts.Timestamps)
	tail := q.Get("tailLines")
	if old := q.Get("tail"); old != "" {
		tail = old
		if old == "all" {
			tail = ""
		}
	}
	integer("tailLines", tail, &opts.TailLines, 0, apivalidation.IsNegativeErrorMsg)
	integer("limitBytes", q.Get("limitBytes"), &opts.LimitBytes, 1, "must be greater than 0")
	var sinceSeconds int64
	if integer("sinceSeconds", q.Get("sinceSeconds"), &sinceSeconds, 1, "must be greater than 0") {
		opts.Since = now.Add(-time.Duration(min(sinceSeconds, maxSinceSeconds)) * time.Second)
	}
	if s := q.Get("sinceTime"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath("sinceTime"), s, "must be an RFC 3339 time"))
		case q.Get("sinceSeconds") != "":
			errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
		default:
			opts.Since = t
		}
	}
	if q.Has("stream") {
		errs = append(errs, field.Forbidden(field.NewPath("stream"), "may not be specified: podlife serves stdout and stderr together, as the kubelet without its PodLogsQuerySplitStreams gate (alpha)"))
	}
	return opts, previous, errs.ToAggregate()
}
