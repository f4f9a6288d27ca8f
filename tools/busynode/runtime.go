package main

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// namespaceLabel is the label both the kubelet and podlife put on every
// sandbox and container of a pod: the pod's namespace.
const namespaceLabel = "io.kubernetes.pod.namespace"

// runtime is the CRI runtime service both nodes talk to.
type runtime struct {
	conn *grpc.ClientConn
	rs   runtimeapi.RuntimeServiceClient
}

func dialRuntime(endpoint string) (*runtime, error) {
	if !strings.HasPrefix(endpoint, "unix://") {
		return nil, fmt.Errorf("runtime endpoint %q: want unix:///PATH", endpoint)
	}
	conn, err := grpc.NewClient("unix://"+strings.TrimPrefix(endpoint, "unix://"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	return &runtime{conn: conn, rs: runtimeapi.NewRuntimeServiceClient(conn)}, nil
}

func (r *runtime) close() { _ = r.conn.Close() }

// census counts a namespace's sandboxes and containers in the runtime: all
// of them, and those still running (a ready sandbox, a running container).
type census struct{ sandboxes, readySandboxes, containers, runningContainers int }

func (c census) stopped() bool { return c.readySandboxes == 0 && c.runningContainers == 0 }
func (c census) removed() bool { return c.sandboxes == 0 && c.containers == 0 }

func (r *runtime) census(ctx context.Context, namespace string) (census, error) {
	sel := map[string]string{namespaceLabel: namespace}
	sbs, err := r.rs.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel}})
	if err != nil {
		return census{}, fmt.Errorf("ListPodSandbox: %w", err)
	}
	cs, err := r.rs.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}})
	if err != nil {
		return census{}, fmt.Errorf("ListContainers: %w", err)
	}
	c := census{sandboxes: len(sbs.Items), containers: len(cs.Containers)}
	for _, s := range sbs.Items {
		if s.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			c.readySandboxes++
		}
	}
	for _, ct := range cs.Containers {
		if ct.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			c.runningContainers++
		}
	}
	return c, nil
}

// removeAll stops and removes every sandbox in the runtime (and with them
// their containers), and then any container left: the runtime empty before
// the next node starts, whatever the last one left behind.
func (r *runtime) removeAll(ctx context.Context) (int, error) {
	sbs, err := r.rs.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return 0, fmt.Errorf("ListPodSandbox: %w", err)
	}
	for _, s := range sbs.Items {
		if _, err := r.rs.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			return 0, fmt.Errorf("StopPodSandbox %s: %w", s.Id, err)
		}
		if _, err := r.rs.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			return 0, fmt.Errorf("RemovePodSandbox %s: %w", s.Id, err)
		}
	}
	cs, err := r.rs.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return 0, fmt.Errorf("ListContainers: %w", err)
	}
	for _, c := range cs.Containers {
		if _, err := r.rs.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: c.Id}); err != nil {
			return 0, fmt.Errorf("StopContainer %s: %w", c.Id, err)
		}
		if _, err := r.rs.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.Id}); err != nil {
			return 0, fmt.Errorf("RemoveContainer %s: %w", c.Id, err)
		}
	}
	return len(sbs.Items) + len(cs.Containers), nil
}
