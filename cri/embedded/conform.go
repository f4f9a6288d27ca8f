package embedded

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	apitest "k8s.io/cri-api/pkg/apis/testing"
)

// killedExitCode is a container's exit code when its sandbox is stopped
// under it: SIGKILL, as containerd does.
const killedExitCode = 137

// conform holds the fake to the rules a real runtime keeps (see the package
// doc). It runs before the fake's handler, under guard: a non-nil resp
// answers the call in the fake's place, a non-nil error fails it, and (nil,
// nil) lets the fake answer.
func (r *Runtime) conform(req any) (resp any, err error) {
	if req, ok := req.(*runtimeapi.PullImageRequest); ok {
		resp, err := r.pull(req)
		if err != nil {
			return nil, err
		}
		return resp, nil
	}
	rs := r.fake.RuntimeService
	rs.Lock()
	defer rs.Unlock()
	switch req := req.(type) {
	case *runtimeapi.RunPodSandboxRequest:
		// The CRI client rejects a status without these.
		md := req.GetConfig().GetMetadata()
		if md.GetName() == "" || md.GetNamespace() == "" || md.GetUid() == "" {
			return nil, status.Error(codes.InvalidArgument, "sandbox metadata needs a name, a namespace and a uid")
		}
		if id := apitest.BuildSandboxName(md); rs.Sandboxes[id] != nil {
			return nil, status.Errorf(codes.AlreadyExists, "sandbox name %q is in use", id)
		}
	case *runtimeapi.CreateContainerRequest:
		cfg := req.GetConfig()
		if cfg.GetMetadata().GetName() == "" || cfg.GetImage().GetImage() == "" {
			return nil, status.Error(codes.InvalidArgument, "container config needs a name and an image")
		}
		if rs.Sandboxes[req.PodSandboxId] == nil {
			return nil, sandboxNotFound(req.PodSandboxId)
		}
		if id := apitest.BuildContainerName(cfg.Metadata, req.PodSandboxId); rs.Containers[id] != nil {
			return nil, status.Errorf(codes.AlreadyExists, "container name %q is in use", id)
		}
	case *runtimeapi.StartContainerRequest:
		c := rs.Containers[req.ContainerId]
		if c == nil {
			return nil, containerNotFound(req.ContainerId)
		}
		if c.State != runtimeapi.ContainerState_CONTAINER_CREATED {
			return nil, status.Errorf(codes.FailedPrecondition, "container %q is %s, not created", c.Id, c.State)
		}
		if s := rs.Sandboxes[c.SandboxID]; s == nil || s.State != runtimeapi.PodSandboxState_SANDBOX_READY {
			return nil, status.Errorf(codes.FailedPrecondition, "sandbox %q of container %q is not ready", c.SandboxID, c.Id)
		}
	case *runtimeapi.StopContainerRequest:
		c := rs.Containers[req.ContainerId]
		if c == nil {
			return nil, containerNotFound(req.ContainerId)
		}
		// The fake would overwrite an exited container's FinishedAt and
		// leave no reason.
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			exit(c, 0)
		}
		return &runtimeapi.StopContainerResponse{}, nil
	case *runtimeapi.ContainerStatusRequest:
		if rs.Containers[req.ContainerId] == nil {
			return nil, containerNotFound(req.ContainerId)
		}
	case *runtimeapi.PodSandboxStatusRequest:
		if rs.Sandboxes[req.PodSandboxId] == nil {
			return nil, sandboxNotFound(req.PodSandboxId)
		}
	case *runtimeapi.StopPodSandboxRequest:
		if rs.Sandboxes[req.PodSandboxId] == nil {
			return nil, sandboxNotFound(req.PodSandboxId)
		}
		for _, c := range rs.Containers {
			if c.SandboxID == req.PodSandboxId && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				exit(c, killedExitCode)
			}
		}
	case *runtimeapi.RemovePodSandboxRequest:
		for id, c := range rs.Containers {
			if c.SandboxID == req.PodSandboxId {
				delete(rs.Containers, id)
			}
		}
	}
	return nil, nil
}

// pull makes any image present at once. The fake's PullImage would do the
// same but also keep every request forever.
func (r *Runtime) pull(req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	spec := req.GetImage()
	if spec.GetImage() == "" {
		return nil, status.Error(codes.InvalidArgument, "no image to pull")
	}
	is := r.fake.ImageService
	is.Lock()
	defer is.Unlock()
	if is.Images[spec.Image] == nil {
		is.Images[spec.Image] = &runtimeapi.Image{
			Id:       spec.Image,
			RepoTags: []string{spec.Image},
			Spec:     proto.Clone(spec).(*runtimeapi.ImageSpec),
			Size:     is.FakeImageSize,
		}
	}
	return &runtimeapi.PullImageResponse{ImageRef: spec.Image}, nil
}

func containerNotFound(id string) error {
	return status.Errorf(codes.NotFound, "container %q not found", id)
}

func sandboxNotFound(id string) error {
	return status.Errorf(codes.NotFound, "sandbox %q not found", id)
}
