package cri

import (
	"context"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Limited are a runtime's services behind one limit on the CRI calls in
// flight.
type Limited struct {
	// Runtime and Images are the syncer's: at most n calls that change the
	// runtime (run, create, start, stop, remove, pull) and, in a lane of
	// their own, at most n reads (lists and statuses). Thousands of pods
	// stopped at once then queue here instead of piling up in the runtime
	// until every call times out, and a pod's read never waits behind
	// stops that each take a grace period.
	Runtime Runtime
	Images  Images
	// Poll is the status cache's, with a lane of one call of its own: the
	// poll (and housekeeping's read through it) never waits behind the
	// pods' calls. The cache makes one call at a time anyway.
	Poll Runtime
}

// Limit puts rt and images behind a limit of n calls of each kind. A call
// waits for its slot until its context ends; the client's own timeout
// starts only with the call.
func Limit(rt Runtime, images Images, n int) Limited {
	l := &limiter{changes: make(lane, n), reads: make(lane, n)}
	poll := make(lane, 1)
	return Limited{
		Runtime: &limitedRuntime{rt: rt, limiter: l},
		Images:  &limitedImages{images: images, limiter: l},
		Poll:    &limitedRuntime{rt: rt, limiter: &limiter{changes: poll, reads: poll}},
	}
}

type limiter struct{ changes, reads lane }

// lane is a counting semaphore: a slot is a value in the channel.
type lane chan struct{}

// call runs f in a slot of the lane, once one is free or ctx ends.
func call[T any](ctx context.Context, l lane, f func() (T, error)) (T, error) {
	select {
	case l <- struct{}{}:
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
	defer func() { <-l }()
	return f()
}

// do is call for a method that returns only an error.
func do(ctx context.Context, l lane, f func() error) error {
	_, err := call(ctx, l, func() (struct{}, error) { return struct{}{}, f() })
	return err
}

type limitedRuntime struct {
	rt Runtime
	*limiter
}

func (r *limitedRuntime) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	return call(ctx, r.changes, func() (string, error) { return r.rt.RunPodSandbox(ctx, config, runtimeHandler) })
}

func (r *limitedRuntime) StopPodSandbox(ctx context.Context, podSandboxID string) error {
	return do(ctx, r.changes, func() error { return r.rt.StopPodSandbox(ctx, podSandboxID) })
}

func (r *limitedRuntime) RemovePodSandbox(ctx context.Context, podSandboxID string) error {
	return do(ctx, r.changes, func() error { return r.rt.RemovePodSandbox(ctx, podSandboxID) })
}

func (r *limitedRuntime) PodSandboxStatus(ctx context.Context, podSandboxID string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	return call(ctx, r.reads, func() (*runtimeapi.PodSandboxStatusResponse, error) {
		return r.rt.PodSandboxStatus(ctx, podSandboxID, verbose)
	})
}

func (r *limitedRuntime) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	return call(ctx, r.reads, func() ([]*runtimeapi.PodSandbox, error) { return r.rt.ListPodSandbox(ctx, filter) })
}

func (r *limitedRuntime) CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	return call(ctx, r.changes, func() (string, error) {
		return r.rt.CreateContainer(ctx, podSandboxID, config, sandboxConfig)
	})
}

func (r *limitedRuntime) StartContainer(ctx context.Context, containerID string) error {
	return do(ctx, r.changes, func() error { return r.rt.StartContainer(ctx, containerID) })
}

func (r *limitedRuntime) StopContainer(ctx context.Context, containerID string, timeout int64) error {
	return do(ctx, r.changes, func() error { return r.rt.StopContainer(ctx, containerID, timeout) })
}

func (r *limitedRuntime) RemoveContainer(ctx context.Context, containerID string) error {
	return do(ctx, r.changes, func() error { return r.rt.RemoveContainer(ctx, containerID) })
}

func (r *limitedRuntime) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	return call(ctx, r.reads, func() ([]*runtimeapi.Container, error) { return r.rt.ListContainers(ctx, filter) })
}

func (r *limitedRuntime) ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	return call(ctx, r.reads, func() (*runtimeapi.ContainerStatusResponse, error) {
		return r.rt.ContainerStatus(ctx, containerID, verbose)
	})
}

// ExecSync runs a hook, which changes the container as a stop does, in the
// lane of changes.
func (r *limitedRuntime) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	type out struct{ stdout, stderr []byte }
	o, err := call(ctx, r.changes, func() (out, error) {
		stdout, stderr, err := r.rt.ExecSync(ctx, containerID, cmd, timeout)
		return out{stdout, stderr}, err
	})
	return o.stdout, o.stderr, err
}

type limitedImages struct {
	images Images
	*limiter
}

func (i *limitedImages) ImageStatus(ctx context.Context, image *runtimeapi.ImageSpec, verbose bool) (*runtimeapi.ImageStatusResponse, error) {
	return call(ctx, i.reads, func() (*runtimeapi.ImageStatusResponse, error) { return i.images.ImageStatus(ctx, image, verbose) })
}

func (i *limitedImages) PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, podSandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	return call(ctx, i.changes, func() (string, error) { return i.images.PullImage(ctx, image, auth, podSandboxConfig) })
}

// The streaming calls are reads: they only hand out a URL.

func (r *limitedRuntime) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return call(ctx, r.reads, func() (*runtimeapi.ExecResponse, error) { return r.rt.Exec(ctx, req) })
}

func (r *limitedRuntime) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	return call(ctx, r.reads, func() (*runtimeapi.AttachResponse, error) { return r.rt.Attach(ctx, req) })
}

func (r *limitedRuntime) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return call(ctx, r.reads, func() (*runtimeapi.PortForwardResponse, error) { return r.rt.PortForward(ctx, req) })
}
