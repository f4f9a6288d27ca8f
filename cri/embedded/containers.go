package embedded

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// container is a container's status and its sandbox.
type container struct {
	status    *runtimeapi.ContainerStatus
	sandboxID string
}

// exit ends c as a real runtime reports it: EXITED, FinishedAt now, reason
// "Completed" for exit code 0 and "Error" otherwise.
func (c *container) exit(exitCode int32) {
	c.status.State = runtimeapi.ContainerState_CONTAINER_EXITED
	c.status.FinishedAt = time.Now().UnixNano()
	c.status.ExitCode = exitCode
	c.status.Reason = "Completed"
	if exitCode != 0 {
		c.status.Reason = "Error"
	}
}

// CreateContainer creates a container in an existing sandbox, ready or not
// (only StartContainer asks for a ready one). The image is not checked.
func (s *service) CreateContainer(_ context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	cfg := req.GetConfig()
	md := cfg.GetMetadata()
	if md.GetName() == "" || cfg.GetImage().GetImage() == "" {
		return nil, status.Error(codes.InvalidArgument, "container config needs a name and an image")
	}
	if s.sandboxes[req.PodSandboxId] == nil {
		return nil, sandboxNotFound(req.PodSandboxId)
	}
	id := fmt.Sprintf("%s_%s_%d", req.PodSandboxId, md.Name, md.Attempt)
	if s.containers[id] != nil {
		return nil, status.Errorf(codes.AlreadyExists, "container name %q is in use", id)
	}
	s.containers[id] = &container{sandboxID: req.PodSandboxId, status: &runtimeapi.ContainerStatus{
		Id:          id,
		Metadata:    md,
		State:       runtimeapi.ContainerState_CONTAINER_CREATED,
		CreatedAt:   time.Now().UnixNano(),
		Image:       cfg.Image,
		ImageRef:    cfg.Image.Image,
		Labels:      cfg.Labels,
		Annotations: cfg.Annotations,
	}}
	return &runtimeapi.CreateContainerResponse{ContainerId: id}, nil
}

// StartContainer starts a created container in a ready sandbox, once.
func (s *service) StartContainer(_ context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	c, err := s.findContainer(req.ContainerId)
	if err != nil {
		return nil, err
	}
	if c.status.State != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is %s, not created", c.status.Id, c.status.State)
	}
	if sb := s.sandboxes[c.sandboxID]; sb == nil || sb.State != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "sandbox %q of container %q is not ready", c.sandboxID, c.status.Id)
	}
	c.status.State = runtimeapi.ContainerState_CONTAINER_RUNNING
	c.status.StartedAt = time.Now().UnixNano()
	return &runtimeapi.StartContainerResponse{}, nil
}

// StopContainer ends a running container at once, with exit code 0, as if
// it honoured SIGTERM; the timeout does not matter. A container that does
// not run is left as it is.
func (s *service) StopContainer(_ context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	c, err := s.findContainer(req.ContainerId)
	if err != nil {
		return nil, err
	}
	if c.status.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
		c.exit(0)
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer removes the container, whatever its state; removing it
// again is no error.
func (s *service) RemoveContainer(_ context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	delete(s.containers, req.ContainerId)
	return &runtimeapi.RemoveContainerResponse{}, nil
}

func (s *service) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	c, err := s.findContainer(req.ContainerId)
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ContainerStatusResponse{Status: proto.Clone(c.status).(*runtimeapi.ContainerStatus)}, nil
}

// ExecSync in a running container succeeds at once, with exit code 0 and
// no output: exec hooks and probes pass.
func (s *service) ExecSync(_ context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	c, err := s.findContainer(req.ContainerId)
	if err != nil {
		return nil, err
	}
	if c.status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is %s, not running", c.status.Id, c.status.State)
	}
	return &runtimeapi.ExecSyncResponse{}, nil
}

func (s *service) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	return &runtimeapi.ListContainersResponse{Containers: s.listContainers(req.Filter)}, nil
}

// StreamContainers sends the list in one message.
func (s *service) StreamContainers(req *runtimeapi.StreamContainersRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamContainersResponse]) error {
	return stream.Send(&runtimeapi.StreamContainersResponse{Containers: s.listContainers(req.Filter)})
}

// listContainers lists the containers that f (nil: all) matches, by ID.
func (s *service) listContainers(f *runtimeapi.ContainerFilter) []*runtimeapi.Container {
	list := []*runtimeapi.Container{}
	for _, id := range slices.Sorted(maps.Keys(s.containers)) {
		c := s.containers[id]
		st := c.status
		if f.GetId() != "" && f.Id != id ||
			f.GetPodSandboxId() != "" && f.PodSandboxId != c.sandboxID ||
			f.GetState() != nil && f.State.State != st.State ||
			!filterLabels(f.GetLabelSelector(), st.Labels) {
			continue
		}
		list = append(list, &runtimeapi.Container{
			Id: id, PodSandboxId: c.sandboxID, Metadata: st.Metadata, State: st.State, CreatedAt: st.CreatedAt,
			Image: st.Image, ImageRef: st.ImageRef, Labels: st.Labels, Annotations: st.Annotations,
		})
	}
	return list
}

// findContainer is the container id, or a NotFound error.
func (s *service) findContainer(id string) (*container, error) {
	if c := s.containers[id]; c != nil {
		return c, nil
	}
	return nil, status.Errorf(codes.NotFound, "container %q not found", id)
}
