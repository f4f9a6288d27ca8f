package embedded

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// InjectError makes the next call of the CRI method (its gRPC name, as
// "StopContainer" or "PullImage") fail with err; errors injected for one
// method fail its next calls in order, once each. err reaches the client with
// its gRPC code if it is a status error, as Unknown otherwise. An unknown
// method is an error, so that a typo does not pass for a runtime that works.
func (r *Runtime) InjectError(method string, err error) error {
	if !isMethod(method) {
		return fmt.Errorf("embedded runtime: no CRI method %q", method)
	}
	if err == nil {
		return fmt.Errorf("embedded runtime: nil error injected for %s", method)
	}
	r.svc.mu.Lock()
	defer r.svc.mu.Unlock()
	r.svc.injected[method] = append(r.svc.injected[method], err)
	return nil
}

func isMethod(name string) bool {
	for _, d := range []*grpc.ServiceDesc{&runtimeapi.RuntimeService_ServiceDesc, &runtimeapi.ImageService_ServiceDesc} {
		for _, m := range d.Methods {
			if m.MethodName == name {
				return true
			}
		}
		for _, s := range d.Streams {
			if s.StreamName == name {
				return true
			}
		}
	}
	return false
}

// ExitContainer makes a running container end by itself with exitCode, as
// its process would: EXITED, FinishedAt now, reason "Completed" for 0 and
// "Error" otherwise. It fails for an unknown container or one not running.
func (r *Runtime) ExitContainer(id string, exitCode int32) error {
	r.svc.mu.Lock()
	defer r.svc.mu.Unlock()
	c, err := r.svc.findContainer(id)
	if err != nil {
		return err
	}
	if c.status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return status.Errorf(codes.FailedPrecondition, "container %q is %s, not running", id, c.status.State)
	}
	c.exit(exitCode)
	return nil
}
