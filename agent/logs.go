package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri/logs"
)

// Container logs are served on the control socket only: they can hold
// secrets, and the TCP endpoint is open to every local user (the kubelet's
// read-only port serves none either; its authenticated port does).

// containerLogRoutes registers /containerLogs on the control socket, in
// the kubelet's shape; the container may be left out of the path when the
// pod has one.
func (a *Agent) containerLogRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}", a.serveContainerLogs)
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", a.serveContainerLogs)
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
func (a *Agent) serveContainerLogs(w http.ResponseWriter, r *http.Request) {
	opts, previous, err := parseLogQuery(r.URL.Query(), a.clock.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	log, err := a.containerLog(r.Context(), r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"), previous)
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
		a.log.Warn("container log: the output ended early", "path", r.URL.Path, "err", err)
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

// containerLog finds the log of a container of the admitted pod named
// namespace/name. Of two pods of that name (one waiting for the other's
// end), the first whose container has a log is taken.
func (a *Agent) containerLog(ctx context.Context, namespace, name, container string, previous bool) (*logs.ContainerLog, error) {
	a.mu.Lock()
	var pods []*v1.Pod
	var rejected []string
	for _, e := range a.pods {
		if e.pod.Namespace != namespace || e.pod.Name != name {
			continue
		}
		if e.rejection != nil {
			rejected = append(rejected, fmt.Sprintf("pod %s/%s (%s) was rejected at admission: %s", namespace, name, e.pod.UID, e.rejection.Message))
			continue
		}
		pods = append(pods, e.pod)
	}
	a.mu.Unlock()
	if len(pods) == 0 {
		if len(rejected) > 0 {
			return nil, &notFoundError{strings.Join(rejected, "; ") + ": it has no containers"}
		}
		return nil, &notFoundError{fmt.Sprintf("pod %s/%s is not one of this agent's pods", namespace, name)}
	}
	slices.SortFunc(pods, func(x, y *v1.Pod) int { return strings.Compare(string(x.UID), string(y.UID)) })
	var first error
	for _, p := range pods {
		log, err := a.syncer.ContainerLog(ctx, p, container, previous)
		if err == nil {
			return log, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// ContainerLogs writes to w the log of a container (or the pod's only one,
// container "") of the pod namespace/name of the agent whose control
// socket is at path, as query (the /containerLogs parameters) says. A
// follow lasts until the container exits or ctx ends.
func ContainerLogs(ctx context.Context, path, namespace, name, container string, query url.Values, w io.Writer) error {
	u := "http://podlife/containerLogs/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
	if container != "" {
		u += "/" + url.PathEscape(container)
	}
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	client := controlClient(path)
	client.Timeout = 0 // a follow lasts as long as its container
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("agent control socket %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
		return fmt.Errorf("agent control socket %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("agent control socket %s: %w", path, err)
	}
	return nil
}

// runLogRotation rotates the containers' logs every
// ContainerLogMonitorInterval until ctx ends.
func (a *Agent) runLogRotation(ctx context.Context) {
	tick := a.clock.NewTicker(a.cfg.ContainerLogMonitorInterval.Duration)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
		if err := a.rotator.Rotate(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("container log rotation", "err", err)
		}
	}
}
