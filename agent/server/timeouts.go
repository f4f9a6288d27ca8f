package server

import (
	"net/http"
	"time"
)

// The timeouts of the agent's HTTP servers, the kubelet's where it has
// them (pkg/kubelet/server ListenAndServeKubeletServer).
const (
	// DefaultIdleTimeout closes a keep-alive connection that sent no
	// request for that long: the kubelet's 90 s, http.DefaultTransport's
	// own keep-alive, so a well-behaved client closes first.
	DefaultIdleTimeout = 90 * time.Second
	// ReadHeaderTimeout bounds the sending of a request's headers: a
	// client that trickles them (slowloris) holds no connection longer.
	ReadHeaderTimeout = 10 * time.Second
	// MaxHeaderBytes is the kubelet's 1 MiB.
	MaxHeaderBytes = 1 << 20
	// ShortAnswerTimeout bounds reading a whole request and writing its
	// answer on the read-only endpoint, whose answers are all short
	// (metrics, pod lists): a reader that stops reading holds no
	// connection longer.
	ShortAnswerTimeout = time.Minute
	// KubeletStreamTimeout is the kubelet API's read and write timeout,
	// the kubelet's 4 h: it bounds a log follow, an exec, attach or
	// port-forward too, as the kubelet's does.
	KubeletStreamTimeout = 4 * time.Hour
)

// Answers is the longest a request and its answer may take, whole:
// reading the request and writing the answer (http.Server's ReadTimeout
// and WriteTimeout). None for a server of log follows that last as long
// as their container: a read deadline there would end the follow (net/http
// cancels a request's context when its background read fails).
type Answers time.Duration

const (
	// Streams have no read or write timeout (the control socket's log
	// follows).
	Streams Answers = 0
	// ShortAnswers is the read-only endpoint's.
	ShortAnswers = Answers(ShortAnswerTimeout)
)

// NewHTTPServer is an http.Server of handler that closes idle keep-alive
// connections after idle (0: DefaultIdleTimeout), bounds the request
// headers' time and size, and whole requests and answers as answers says.
// Every HTTP server the agent runs is made here.
func NewHTTPServer(handler http.Handler, idle time.Duration, answers Answers) *http.Server {
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       idle,
		ReadTimeout:       time.Duration(answers),
		WriteTimeout:      time.Duration(answers),
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}
