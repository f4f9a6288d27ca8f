package embedded

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"
)

// client is a running runtime and real gRPC clients of it.
type client struct {
	rt     *Runtime
	rs     internalapi.RuntimeService
	images internalapi.ImageManagerService
}

// start serves a runtime in a temporary directory; at cleanup the clients
// are closed and the runtime stopped.
func start(t *testing.T) *client {
	t.Helper()
	rt, err := Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Stop(); err != nil {
			t.Error(err)
		}
	})
	return &client{rt: rt, rs: dial(t, rt.Endpoint(), false), images: dialImages(t, rt.Endpoint())}
}

func dial(t *testing.T, endpoint string, streaming bool) internalapi.RuntimeService {
	t.Helper()
	rs, err := remote.NewRemoteRuntimeServiceBuilder().WithEndpoint(endpoint).
		WithConnectionTimeout(5 * time.Second).WithUseStreaming(streaming).Build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Close(context.Background()) })
	return rs
}

func dialImages(t *testing.T, endpoint string) internalapi.ImageManagerService {
	t.Helper()
	is, err := remote.NewRemoteImageServiceBuilder().WithEndpoint(endpoint).
		WithConnectionTimeout(5 * time.Second).Build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { is.Close(context.Background()) })
	return is
}

func sandboxConfig(name, uid string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: uid},
		Labels:   map[string]string{"io.kubernetes.pod.uid": uid, "io.kubernetes.pod.name": name},
	}
}

func containerConfig(name, uid string, attempt uint32) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		Image:    &runtimeapi.ImageSpec{Image: "busybox:1.36"},
		Labels:   map[string]string{"io.kubernetes.pod.uid": uid, "io.kubernetes.container.name": name},
	}
}

// runPod runs a sandbox for uid and a started container "app" in it.
func (c *client) runPod(t *testing.T, name, uid string) (sandboxID, containerID string) {
	t.Helper()
	sb := sandboxConfig(name, uid)
	sandboxID, err := c.rs.RunPodSandbox(t.Context(), sb, "")
	if err != nil {
		t.Fatal(err)
	}
	containerID, err = c.rs.CreateContainer(t.Context(), sandboxID, containerConfig("app", uid, 0), sb)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.rs.StartContainer(t.Context(), containerID); err != nil {
		t.Fatal(err)
	}
	return sandboxID, containerID
}

func (c *client) containerStatus(t *testing.T, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	resp, err := c.rs.ContainerStatus(t.Context(), id, false)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status
}

func (c *client) sandboxState(t *testing.T, id string) runtimeapi.PodSandboxState {
	t.Helper()
	resp, err := c.rs.PodSandboxStatus(t.Context(), id, false)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status.State
}

// wantCode fails unless err carries the gRPC code.
func wantCode(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Errorf("%s: got %v, want code %v", what, err, code)
	}
}
