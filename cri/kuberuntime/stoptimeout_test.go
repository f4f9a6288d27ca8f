package kuberuntime

import (
	"context"
	"os"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/embedded"
	"github.com/podlife/podlife/internal/crifake"
)

// embeddedClients starts an embedded runtime for the test and connects the
// CRI client to it.
func embeddedClients(t testing.TB) (*embedded.Runtime, cri.Runtime, cri.Images) {
	t.Helper()
	dir, err := os.MkdirTemp("", "pl") // short: a unix socket path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	emb, err := embedded.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Stop() })
	ctx := context.Background()
	rt, err := remote.NewRemoteRuntimeServiceBuilder().WithEndpoint(emb.Endpoint()).WithConnectionTimeout(10 * time.Second).Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(ctx) })
	images, err := remote.NewRemoteImageServiceBuilder().WithEndpoint(emb.Endpoint()).WithConnectionTimeout(10 * time.Second).Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = images.Close(ctx) })
	return emb, rt, images
}

// A grace period beyond what the CRI client can add to its timeout (it
// would overflow time.Duration, and the stop would expire at once) is
// clamped: the pod still stops, through the real client.
func TestHugeGracePeriodStillStops(t *testing.T) {
	_, rt, images := embeddedClients(t)
	ctx := context.Background()
	s := NewSyncer(rt, images, Options{})
	defer s.Close()
	for _, tc := range []struct {
		name, pod      string
		podGrace, kill *int64
	}{
		{"the pod's own", "own", new(int64(9.3e9)), nil},
		{"a kill's", "kill", nil, new(int64(9.3e9))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := crifake.MakePod(tc.pod, v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
			pod.Spec.TerminationGracePeriodSeconds = tc.podGrace
			if terminal, err := s.SyncPod(ctx, 0, pod, nil, nil); terminal || err != nil {
				t.Fatalf("SyncPod = %v, %v", terminal, err)
			}
			if err := s.SyncTerminatingPod(ctx, pod, nil, tc.kill, nil); err != nil {
				t.Fatalf("SyncTerminatingPod: %v", err)
			}
			cs, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{cri.PodUIDLabel: string(pod.UID)}})
			if err != nil || len(cs) != 1 || cs[0].State != runtimeapi.ContainerState_CONTAINER_EXITED {
				t.Errorf("containers %v, %v; want one exited", cs, err)
			}
		})
	}
}
