package kubeletserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/proxy"
	translator "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// The streaming endpoints, as pkg/kubelet/server's getExec, getAttach,
// getPortForward and getRun: the runtime's streaming server serves the
// session at a URL the CRI call returns, and the request is proxied there
// with its upgrade (SPDY, or WebSocket for port-forward's tunnel and the
// v5 remote command protocol, which is translated to SPDY as the kubelet
// does).

// podRef is the pod of a request's path: {namespace}/{pod}[/{uid}].
func podRef(r *http.Request) PodRef {
	return PodRef{Namespace: r.PathValue("namespace"), Name: r.PathValue("pod"), UID: types.UID(r.PathValue("uid"))}
}

// streamOptions reads the streams a session asks for: the kubelet's
// parameters (input, output, error, tty = "1", what the API server sends)
// or kubectl's names (stdin, stdout, stderr = true); at least one stream.
// A TTY has no separate stderr.
func streamOptions(q url.Values) (StreamOptions, error) {
	var errs []error
	flag := func(kubelet, kubectl string) bool {
		if q.Get(kubelet) == "1" {
			return true
		}
		if s := q.Get(kubectl); s != "" {
			b, err := strconv.ParseBool(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s=%q is not a boolean", kubectl, s))
			}
			return b
		}
		return false
	}
	opts := StreamOptions{
		Stdin:  flag(v1.ExecStdinParam, "stdin"),
		Stdout: flag(v1.ExecStdoutParam, "stdout"),
		Stderr: flag(v1.ExecStderrParam, "stderr"),
		TTY:    flag(v1.ExecTTYParam, "tty"),
	}
	if err := errors.Join(errs...); err != nil {
		return opts, err
	}
	if opts.TTY {
		opts.Stderr = false
	}
	if !opts.Stdin && !opts.Stdout && !opts.Stderr {
		return opts, errors.New("you must specify at least 1 of stdin, stdout, stderr")
	}
	return opts, nil
}

// ports reads port-forward's optional port parameters.
func ports(q url.Values) ([]int32, error) {
	var out []int32
	for _, s := range q[v1.PortHeader] {
		for _, p := range strings.Split(s, ",") {
			n, err := strconv.ParseUint(p, 10, 16)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("port=%q is not a port number (1-65535)", p)
			}
			out = append(out, int32(n))
		}
	}
	return out, nil
}

// needUpgrade answers a streaming request that is not an upgrade (the
// proxy would refuse it) before a session is asked of the runtime.
func needUpgrade(w http.ResponseWriter, r *http.Request) bool {
	if httpstream.IsUpgradeRequest(r) {
		return false
	}
	http.Error(w, r.URL.Path+": Upgrade request required: this endpoint streams over SPDY or WebSocket (kubectl exec, attach and port-forward upgrade)", http.StatusBadRequest)
	return true
}

func (s *Server) serveExec(w http.ResponseWriter, r *http.Request) {
	opts, err := streamOptions(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cmd := r.URL.Query()[v1.ExecCommandParam]
	if len(cmd) == 0 {
		http.Error(w, "no command: give it as command= parameters, one per argument", http.StatusBadRequest)
		return
	}
	if needUpgrade(w, r) {
		return
	}
	location, err := s.host.Exec(r.Context(), podRef(r), r.PathValue("container"), cmd, opts)
	s.proxyStream(w, r, location, err, opts)
}

func (s *Server) serveAttach(w http.ResponseWriter, r *http.Request) {
	opts, err := streamOptions(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if needUpgrade(w, r) {
		return
	}
	location, err := s.host.Attach(r.Context(), podRef(r), r.PathValue("container"), opts)
	s.proxyStream(w, r, location, err, opts)
}

func (s *Server) servePortForward(w http.ResponseWriter, r *http.Request) {
	tunnel := wsstream.IsWebSocketRequestWithTunnelingProtocol(r)
	var p []int32
	if !tunnel {
		var err error
		if p, err = ports(r.URL.Query()); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	if needUpgrade(w, r) {
		return
	}
	location, err := s.host.PortForward(r.Context(), podRef(r), p)
	u, ok := s.streamURL(w, r, location, err)
	if !ok {
		return
	}
	var handler http.Handler = proxy.NewUpgradeAwareHandler(u, nil, false, true, responder{s.log})
	s.log.Debug("kubelet API: port-forward proxied", "path", r.URL.Path, "upgrade", r.Header.Get("Upgrade"), "tunnel", tunnel)
	if tunnel {
		// kubectl's port-forward over WebSocket tunnels SPDY through it.
		handler = translator.NewTunnelingHandler(handler)
	}
	handler.ServeHTTP(w, r)
}

// serveRun is POST /run: the command (the cmd parameter, split at
// spaces, as the kubelet's) runs to its end; its output is the answer.
func (s *Server) serveRun(w http.ResponseWriter, r *http.Request) {
	cmd := strings.Fields(r.URL.Query().Get("cmd"))
	if len(cmd) == 0 {
		http.Error(w, "no command: give it as the cmd parameter", http.StatusBadRequest)
		return
	}
	out, err := s.host.Run(r.Context(), podRef(r), r.PathValue("container"), cmd)
	if err != nil {
		s.writeHostError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(out)
}

// proxyStream proxies an exec or attach to the runtime's session at
// location; a v5 WebSocket request is translated to SPDY.
func (s *Server) proxyStream(w http.ResponseWriter, r *http.Request, location string, err error, opts StreamOptions) {
	u, ok := s.streamURL(w, r, location, err)
	if !ok {
		return
	}
	if wsstream.IsWebSocketRequestWithStreamCloseProtocol(r) {
		s.log.Debug("kubelet API: stream over WebSocket, translated to SPDY", "path", r.URL.Path)
		translator.NewStreamTranslatorHandler(u, nil, 0, translator.Options{
			Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, Tty: opts.TTY,
		}).ServeHTTP(w, r)
		return
	}
	s.log.Debug("kubelet API: stream proxied", "path", r.URL.Path, "upgrade", r.Header.Get("Upgrade"))
	proxy.NewUpgradeAwareHandler(u, nil, false, true, responder{s.log}).ServeHTTP(w, r)
}

// streamURL checks the host's answer: an error is written, a URL parsed.
func (s *Server) streamURL(w http.ResponseWriter, r *http.Request, location string, err error) (*url.URL, bool) {
	if err != nil {
		s.writeHostError(w, r, err)
		return nil, false
	}
	u, err := url.Parse(location)
	if err != nil || u.Host == "" {
		http.Error(w, fmt.Sprintf("the runtime returned a bad streaming URL %q", location), http.StatusInternalServerError)
		return nil, false
	}
	return u, true
}

// writeHostError answers a host's error with its status (errorStatus).
func (s *Server) writeHostError(w http.ResponseWriter, r *http.Request, err error) {
	code := errorStatus(err)
	msg := err.Error()
	if code == http.StatusNotImplemented {
		msg = r.URL.Path + ": the container runtime serves no streaming (exec, attach, port-forward): " +
			"the embedded runtime runs no real containers; use a CRI runtime such as containerd (--runtime-endpoint): " + msg
	}
	if code == http.StatusInternalServerError {
		s.log.Warn("kubelet API: request failed", "path", r.URL.Path, "err", err)
	}
	http.Error(w, msg, code)
}

// isUnimplemented reports a gRPC Unimplemented: a runtime without that
// call.
func isUnimplemented(err error) bool { return status.Code(err) == codes.Unimplemented }

// responder reports a proxy's failure, as the kubelet's.
type responder struct{ log *slog.Logger }

func (r responder) Error(w http.ResponseWriter, req *http.Request, err error) {
	r.log.Warn("kubelet API: proxying a stream failed", "path", req.URL.Path, "err", err)
	http.Error(w, err.Error(), http.StatusInternalServerError)
}
