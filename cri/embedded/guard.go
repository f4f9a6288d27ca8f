package embedded

import (
	"context"
	"path"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// unary guards a call and lets conform answer it before the fake does.
func (r *Runtime) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	return r.guard(path.Base(info.FullMethod), func() (any, error) {
		if resp, err := r.conform(req); resp != nil || err != nil {
			return resp, err
		}
		return handler(ctx, req)
	})
}

// stream guards a streaming call (the Stream* lists, GetContainerEvents);
// they only read, so conform has nothing to say.
func (r *Runtime) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	_, err := r.guard(path.Base(info.FullMethod), func() (any, error) {
		return nil, handler(srv, ss)
	})
	return err
}

// guard runs one call alone, fails it if an error was injected for method,
// turns a panic of the fake into an Internal error, and then clears the
// fake's record of calls, which would otherwise grow forever.
func (r *Runtime) guard(method string, call func() (any, error)) (resp any, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.forgetCalls()
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, status.Errorf(codes.Internal, "embedded runtime: %s: %v", method, p)
		}
	}()
	if errs := r.injected[method]; len(errs) > 0 {
		if len(errs) == 1 {
			delete(r.injected, method)
		} else {
			r.injected[method] = errs[1:]
		}
		return nil, errs[0]
	}
	return call()
}

// forgetCalls clears what the fake records of each call; nobody reads it.
func (r *Runtime) forgetCalls() {
	rs, is := r.fake.RuntimeService, r.fake.ImageService
	rs.Lock()
	rs.Called = rs.Called[:0]
	rs.CheckpointedPods, rs.RestoredPods = nil, nil
	rs.Unlock()
	is.Lock()
	is.Called = is.Called[:0]
	is.Unlock()
}
