package embedded

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Version's answer: the name prefixes container IDs in pod statuses
// ("podlife-embedded://...") and the node's container runtime version.
const (
	runtimeName    = "podlife-embedded"
	runtimeVersion = "0.1"
	// kubeAPIVersion is the version of the kubelet's runtime API, as
	// containerd and CRI-O report it.
	kubeAPIVersion = "0.1.0"
)

// service is the runtime and image service: the state of the sandboxes,
// containers and images, in memory. The server's interceptor holds mu
// during every call, so a method runs alone and reads and writes the state
// freely; a response must not share what a later call changes (statuses
// are cloned), because it is marshalled after mu is released.
type service struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	mu         sync.Mutex
	injected   map[string][]error // by method: the errors of its next calls
	sandboxes  map[string]*runtimeapi.PodSandboxStatus
	containers map[string]*container
	images     map[string]*runtimeapi.Image // by name
}

func newService() *service {
	return &service{
		injected:   map[string][]error{},
		sandboxes:  map[string]*runtimeapi.PodSandboxStatus{},
		containers: map[string]*container{},
		images:     map[string]*runtimeapi.Image{},
	}
}

func (s *service) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{
		Version:           kubeAPIVersion,
		RuntimeName:       runtimeName,
		RuntimeVersion:    runtimeVersion,
		RuntimeApiVersion: "v1",
	}, nil
}

// Status: the runtime and its (pretend) network are always ready.
func (s *service) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: true},
	}}}, nil
}

// GetContainerEvents ends at once: there are no events, clients poll.
func (s *service) GetContainerEvents(*runtimeapi.GetEventsRequest, grpc.ServerStreamingServer[runtimeapi.ContainerEventResponse]) error {
	return nil
}

// unimplemented words the error of a method the runtime does not have.
func unimplemented(method string) error {
	return status.Errorf(codes.Unimplemented,
		"the embedded runtime has no %s: its containers run no process and it keeps no logs, stats or metrics; run the agent on a real CRI runtime (--runtime-endpoint)", method)
}

// filterLabels reports whether labels has every pair of selector.
func filterLabels(selector, labels map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
