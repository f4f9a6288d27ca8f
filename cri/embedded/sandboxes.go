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

// sandboxIP is every sandbox's IP.
const sandboxIP = "192.168.192.168"

// killedExitCode is a container's exit code when its sandbox is stopped
// under it: SIGKILL, as containerd does.
const killedExitCode = 137

func (s *service) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	cfg := req.GetConfig()
	md := cfg.GetMetadata()
	// The CRI client rejects a status without these.
	if md.GetName() == "" || md.GetNamespace() == "" || md.GetUid() == "" {
		return nil, status.Error(codes.InvalidArgument, "sandbox metadata needs a name, a namespace and a uid")
	}
	id := fmt.Sprintf("%s_%s_%s_%d", md.Name, md.Namespace, md.Uid, md.Attempt)
	if s.sandboxes[id] != nil {
		return nil, status.Errorf(codes.AlreadyExists, "sandbox name %q is in use", id)
	}
	s.sandboxes[id] = &runtimeapi.PodSandboxStatus{
		Id:        id,
		Metadata:  md,
		State:     runtimeapi.PodSandboxState_SANDBOX_READY,
		CreatedAt: time.Now().UnixNano(),
		Network:   &runtimeapi.PodSandboxNetworkStatus{Ip: sandboxIP},
		// The namespaces asked for, which a client compares with the
		// pod's to tell whether the sandbox must be recreated.
		Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
			Options: cfg.GetLinux().GetSecurityContext().GetNamespaceOptions(),
		}},
		Labels:         cfg.Labels,
		Annotations:    cfg.Annotations,
		RuntimeHandler: req.RuntimeHandler,
	}
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, nil
}

// StopPodSandbox kills the sandbox's running containers; a stopped sandbox
// stays stopped.
func (s *service) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	sb := s.sandboxes[req.PodSandboxId]
	if sb == nil {
		return nil, sandboxNotFound(req.PodSandboxId)
	}
	for _, c := range s.containers {
		if c.sandboxID == sb.Id && c.status.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			c.exit(killedExitCode)
		}
	}
	sb.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// RemovePodSandbox removes the sandbox and its containers, whatever their
// state; removing it again is no error.
func (s *service) RemovePodSandbox(_ context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	maps.DeleteFunc(s.containers, func(_ string, c *container) bool { return c.sandboxID == req.PodSandboxId })
	delete(s.sandboxes, req.PodSandboxId)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func (s *service) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	sb := s.sandboxes[req.PodSandboxId]
	if sb == nil {
		return nil, sandboxNotFound(req.PodSandboxId)
	}
	return &runtimeapi.PodSandboxStatusResponse{Status: proto.Clone(sb).(*runtimeapi.PodSandboxStatus)}, nil
}

func (s *service) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{Items: s.listSandboxes(req.Filter)}, nil
}

// StreamPodSandboxes sends the list in one message.
func (s *service) StreamPodSandboxes(req *runtimeapi.StreamPodSandboxesRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamPodSandboxesResponse]) error {
	return stream.Send(&runtimeapi.StreamPodSandboxesResponse{PodSandboxes: s.listSandboxes(req.Filter)})
}

// listSandboxes lists the sandboxes that f (nil: all) matches, by ID.
func (s *service) listSandboxes(f *runtimeapi.PodSandboxFilter) []*runtimeapi.PodSandbox {
	list := []*runtimeapi.PodSandbox{}
	for _, id := range slices.Sorted(maps.Keys(s.sandboxes)) {
		sb := s.sandboxes[id]
		if f.GetId() != "" && f.Id != id ||
			f.GetState() != nil && f.State.State != sb.State ||
			!filterLabels(f.GetLabelSelector(), sb.Labels) {
			continue
		}
		list = append(list, &runtimeapi.PodSandbox{
			Id: id, Metadata: sb.Metadata, State: sb.State, CreatedAt: sb.CreatedAt,
			Labels: sb.Labels, Annotations: sb.Annotations, RuntimeHandler: sb.RuntimeHandler,
		})
	}
	return list
}

func sandboxNotFound(id string) error {
	return status.Errorf(codes.NotFound, "sandbox %q not found", id)
}
