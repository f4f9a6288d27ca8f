package kubeletserver

import (
	"context"
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/server"
)

// Host is what the kubelet API serves of the agent (the kubelet's
// HostInterface).
type Host interface {
	// HealthProblem says what is wrong with the agent, "" when nothing
	// is (GET /healthz).
	HealthProblem() string
	// PodList is GET /pods: the node's pods, in the kubelet's shape.
	PodList() *v1.PodList
	// Registry holds the agent's metrics (GET /metrics).
	Registry() *prometheus.Registry
	// ProbeMetrics holds prober_probe_total (GET /metrics/probes).
	ProbeMetrics() *prometheus.Registry
	// ContainerLog is GET /containerLogs, as on the control socket.
	server.LogSource
	// Streams are exec, attach, port-forward and run.
	Streams
}

// PodRef names a pod of the node as a request does; UID "" is any pod of
// that name.
type PodRef struct {
	Namespace, Name string
	UID             types.UID
}

// StreamOptions are the streams a session asks for.
type StreamOptions struct {
	Stdin, Stdout, Stderr, TTY bool
}

// Streams reach the runtime's streaming server: each returns the URL of
// a session the runtime serves (or the output of a run). An error with a
// NotFound() true method is a 404 (no such pod, container not running); a
// gRPC Unimplemented (the embedded runtime) a 501; anything else a 500.
type Streams interface {
	Exec(ctx context.Context, pod PodRef, container string, cmd []string, opts StreamOptions) (string, error)
	Attach(ctx context.Context, pod PodRef, container string, opts StreamOptions) (string, error)
	PortForward(ctx context.Context, pod PodRef, ports []int32) (string, error)
	Run(ctx context.Context, pod PodRef, container string, cmd []string) ([]byte, error)
}

// notFound reports whether err says that what was asked for is not there.
func notFound(err error) bool {
	var nf interface{ NotFound() bool }
	return errors.As(err, &nf) && nf.NotFound()
}

// errorStatus is the HTTP status of a host's error.
func errorStatus(err error) int {
	switch {
	case notFound(err):
		return http.StatusNotFound
	case isUnimplemented(err):
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}
