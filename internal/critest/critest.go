// Package critest connects integration tests to a real CRI runtime.
//
// Unit tests of the cri packages run against fakes; what a fake cannot tell is
// how a real runtime behaves: how long StopContainer takes when a process
// ignores SIGTERM, which exit code a killed container reports, what a label
// filter matches. Tests that need those answers call Connect, which dials
// the runtime named by $PODLIFE_CRI_ENDPOINT and skips the test when it is
// unset, so `go test ./...` stays green on machines without a runtime (no
// root, no containerd) while CI, which starts one, runs them:
//
//	ENDPOINT=$(tools/containerd-up.sh | tail -1)
//	PODLIFE_CRI_ENDPOINT=$ENDPOINT go test -race -count=1 ./cri/... ./internal/critest
//	tools/containerd-down.sh "$ENDPOINT"
//
// No registry is reachable there, so tests use only BusyboxImage and
// PauseImage, which tools/containerd-up.sh builds and imports.
//
// Configure pods as the kubelet does, in particular NamespaceOptions: left
// nil, CRI's zero value shares one PID namespace across the pod, so the
// pause process, not the container's, is PID 1, and signal handling differs
// from a real pod's.
//
// This is an ordinary package so that test files in other packages can
// import it; only tests should.
package critest

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	internalapi "k8s.io/cri-api/pkg/apis"
	remote "k8s.io/cri-client/pkg"
)

// EndpointEnv names the environment variable holding the CRI endpoint, e.g.
// unix:///tmp/podlife-containerd.XXXXXX/containerd.sock.
const EndpointEnv = "PODLIFE_CRI_ENDPOINT"

// FeaturesEnv names the environment variable listing, comma-separated, the
// optional runtime features the runtime at EndpointEnv must have: a test of
// such a feature skips when the runtime lacks it, unless it is listed here,
// where it fails. CI lists what the containerd it built has.
const FeaturesEnv = "PODLIFE_CRI_FEATURES"

// FeatureStopSignal is ContainerConfig.StopSignal honoured and reported
// (containerd 2.3 and later; 1.6 ignores it).
const FeatureStopSignal = "stop-signal"

// Images that tools/containerd-up.sh imports into the runtime; keep them in
// sync with BUSYBOX_IMAGE and PAUSE_IMAGE there. Nothing can be pulled in
// CI, so a test container must use one of these.
const (
	// BusyboxImage holds a static busybox with its applets (sh, sleep,
	// cat, ...) in /bin, PATH=/bin, and Cmd ["sh"]: give containers a
	// Command.
	BusyboxImage = "localhost/podlife/busybox:latest"
	// PauseImage is the runtime's sandbox image (containerd's
	// sandbox_image): a shell as PID 1 that sleeps until SIGTERM or
	// SIGKILL. Tests do not normally name it.
	PauseImage = "localhost/podlife/pause:latest"
)

// RequestTimeout bounds each CRI call made through Connect's services
// (cri-client uses the connection timeout for every request; StopContainer
// adds its grace period to it). The kubelet's default is 2 minutes; a local
// runtime under test answers in milliseconds, and a wedged one should fail
// the test well before `go test`'s own timeout.
const RequestTimeout = 30 * time.Second

// Endpoint returns the CRI endpoint from $PODLIFE_CRI_ENDPOINT, or skips the
// test when it is unset: a missing runtime is a property of the machine, not
// a failure of the code under test.
func Endpoint(t testing.TB) string {
	t.Helper()
	ep := os.Getenv(EndpointEnv)
	if ep == "" {
		t.Skip("needs a CRI runtime: set " + EndpointEnv + "; tools/containerd-up.sh (root, containerd) prints one")
	}
	return ep
}

// Unsupported reports that the runtime lacks feature (one of the Feature
// constants), as seen: it skips the test, or fails it when FeaturesEnv
// lists feature.
func Unsupported(t testing.TB, feature, seen string) {
	t.Helper()
	if slices.Contains(strings.Split(os.Getenv(FeaturesEnv), ","), feature) {
		t.Fatalf("%s=%s, but the runtime lacks %s: %s", FeaturesEnv, os.Getenv(FeaturesEnv), feature, seen)
	}
	t.Skipf("SKIPPED: the runtime lacks %s: %s", feature, seen)
}

// Connect dials the runtime and image services at Endpoint (skipping the
// test when it is unset) and closes both when the test ends. A set endpoint
// that does not answer CRI v1 fails the test: CI asked for these tests to
// run.
func Connect(t testing.TB) (internalapi.RuntimeService, internalapi.ImageManagerService) {
	t.Helper()
	ep := Endpoint(t)
	ctx := context.Background()
	// The builders, not the deprecated NewRemoteRuntimeService /
	// NewRemoteImageService wrappers (same behaviour). Unary list calls:
	// containerd 1.6/1.7 have no streaming ones (the client would fall back
	// anyway). The default no-op tracer keeps context propagation.
	rt, err := remote.NewRemoteRuntimeServiceBuilder().
		WithEndpoint(ep).
		WithConnectionTimeout(RequestTimeout).
		WithUseStreaming(false).
		Build(ctx)
	if err != nil {
		t.Fatalf("connect to CRI runtime service at %s=%s: %v", EndpointEnv, ep, err)
	}
	t.Cleanup(func() {
		if err := rt.Close(context.Background()); err != nil {
			t.Errorf("close CRI runtime service: %v", err)
		}
	})
	img, err := remote.NewRemoteImageServiceBuilder().
		WithEndpoint(ep).
		WithConnectionTimeout(RequestTimeout).
		WithUseStreaming(false).
		Build(ctx)
	if err != nil {
		t.Fatalf("connect to CRI image service at %s=%s: %v", EndpointEnv, ep, err)
	}
	t.Cleanup(func() {
		if err := img.Close(context.Background()); err != nil {
			t.Errorf("close CRI image service: %v", err)
		}
	})
	return rt, img
}
