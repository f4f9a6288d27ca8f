// Package crifake holds the fakes and small fixtures that the tests of
// podlife's CRI packages (cri/...) share: a fake runtime and image service
// with hooks in front of their calls, pods built the same way everywhere,
// the fake's IDs of their sandboxes and containers, files and mount points
// for the tests that make them.
//
// This is an ordinary package so that test files in other packages can
// import it; only tests should. It imports none of the cri packages but
// cri/mount, so that their own tests can use it.
package crifake

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakecri "k8s.io/cri-api/pkg/apis/testing"

	"github.com/podlife/podlife/cri/mount"
)

// ---- a runtime wrapper to observe and distort the fake ---------------------

// StopCall is one StopContainer call.
type StopCall struct {
	ID      string
	Timeout int64
}

// HookRuntime is the fake runtime with optional hooks in front of some
// calls; a nil hook passes the call to the fake. It records every
// StopContainer with its timeout.
type HookRuntime struct {
	*fakecri.FakeRuntimeService

	OnCreate func(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig) error // before the fake's CreateContainer; an error fails the call
	OnStart  func(ctx context.Context, id string, next func() error) error
	OnStop   func(ctx context.Context, id string, timeout int64, next func() error) error
	OnRemove func(ctx context.Context, id string, next func() error) error
	OnExec   func(ctx context.Context, id string, cmd []string) error // instead of the fake's ExecSync

	mu    sync.Mutex
	stops []StopCall
}

func (r *HookRuntime) CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	if r.OnCreate != nil {
		if err := r.OnCreate(ctx, sandboxID, cfg); err != nil {
			return "", err
		}
	}
	return r.FakeRuntimeService.CreateContainer(ctx, sandboxID, cfg, sbCfg)
}

func (r *HookRuntime) StartContainer(ctx context.Context, id string) error {
	next := func() error { return r.FakeRuntimeService.StartContainer(ctx, id) }
	if r.OnStart != nil {
		return r.OnStart(ctx, id, next)
	}
	return next()
}

func (r *HookRuntime) StopContainer(ctx context.Context, id string, timeout int64) error {
	r.mu.Lock()
	r.stops = append(r.stops, StopCall{id, timeout})
	r.mu.Unlock()
	next := func() error { return r.FakeRuntimeService.StopContainer(ctx, id, timeout) }
	if r.OnStop != nil {
		return r.OnStop(ctx, id, timeout, next)
	}
	return next()
}

func (r *HookRuntime) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	if r.OnExec != nil {
		return nil, nil, r.OnExec(ctx, id, cmd)
	}
	return r.FakeRuntimeService.ExecSync(ctx, id, cmd, timeout)
}

func (r *HookRuntime) RemoveContainer(ctx context.Context, id string) error {
	next := func() error { return r.FakeRuntimeService.RemoveContainer(ctx, id) }
	if r.OnRemove != nil {
		return r.OnRemove(ctx, id, next)
	}
	return next()
}

// StopCalls returns the StopContainer calls so far, sorted by ID (they run
// concurrently).
func (r *HookRuntime) StopCalls() []StopCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.stops)
	slices.SortFunc(out, func(a, b StopCall) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}

// ResetStops forgets the StopContainer calls so far.
func (r *HookRuntime) ResetStops() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stops = nil
}

// HookImages is the fake image service with an optional hook in front of
// PullImage.
type HookImages struct {
	*fakecri.FakeImageService
	OnPull func(ctx context.Context, image string, next func() (string, error)) (string, error)
}

func (i *HookImages) PullImage(ctx context.Context, spec *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	next := func() (string, error) { return i.FakeImageService.PullImage(ctx, spec, auth, sbCfg) }
	if i.OnPull != nil {
		return i.OnPull(ctx, spec.Image, next)
	}
	return next()
}

// ---- pods ------------------------------------------------------------------

// Ctr is a container spec with an image and a pull policy.
type Ctr struct {
	Name, Image string
	Pull        v1.PullPolicy
}

// MakePod returns a pod named name (UID "uid-"+name) with the containers
// given; each defaults to image "img" and pull policy IfNotPresent.
func MakePod(name string, policy v1.RestartPolicy, containers ...Ctr) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{RestartPolicy: policy},
	}
	for _, c := range containers {
		if c.Image == "" {
			c.Image = "img"
		}
		if c.Pull == "" {
			c.Pull = v1.PullIfNotPresent
		}
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: c.Name, Image: c.Image, ImagePullPolicy: c.Pull})
	}
	return pod
}

// VolumePod is a pod "web" with the volumes given and one container "app"
// mounting what mounts says.
func VolumePod(vols []v1.Volume, mounts ...v1.VolumeMount) *v1.Pod {
	pod := MakePod("web", v1.RestartPolicyAlways, Ctr{Name: "app"})
	pod.Spec.Volumes = vols
	pod.Spec.Containers[0].VolumeMounts = mounts
	return pod
}

// EmptyDir is an emptyDir volume named name.
func EmptyDir(name string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}
}

// HostPathVolume is a volume named name of the node's path, of kind.
func HostPathVolume(name, path string, kind v1.HostPathType) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: path, Type: &kind}}}
}

// FieldEnv is an environment variable named name of the pod's field at
// path (fieldRef).
func FieldEnv(name, path string) v1.EnvVar {
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}}
}

// ResourceEnv is an environment variable named name of a container's
// resource (resourceFieldRef), in units of divisor ("": none).
func ResourceEnv(name, container, res, divisor string) v1.EnvVar {
	ref := &v1.ResourceFieldSelector{ContainerName: container, Resource: res}
	if divisor != "" {
		ref.Divisor = resource.MustParse(divisor)
	}
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{ResourceFieldRef: ref}}
}

// SandboxID is the fake's ID of pod's attempt-th sandbox.
func SandboxID(pod *v1.Pod, attempt uint32) string {
	return fakecri.BuildSandboxName(&runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt})
}

// ContainerID is the fake's ID of the attempt-th instance of container name
// in pod's sbAttempt-th sandbox.
func ContainerID(pod *v1.Pod, sbAttempt uint32, name string, attempt uint32) string {
	return fakecri.BuildContainerName(&runtimeapi.ContainerMetadata{Name: name, Attempt: attempt}, SandboxID(pod, sbAttempt))
}

// ---- waits, files and mounts -----------------------------------------------

// WaitFor waits for ch to be closed or to deliver, failing after a bound
// that is only there so a broken test does not hang.
func WaitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	panic("unreachable")
}

// WriteFile writes content to path, making its directory.
func WriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// NeedRoot skips the test unless it runs as root, which mounts need.
func NeedRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounts need root")
	}
}

// MountRoot is a temporary pods root whose mounts are gone before it is
// removed, also when the test fails.
func MountRoot(t *testing.T) string {
	dir := t.TempDir()
	t.Cleanup(func() {
		if err := mount.UnmountAllUnder(dir); err != nil {
			t.Error(err)
		}
	})
	return dir
}

// CountMounts is how many mounts have path as mount point.
func CountMounts(t *testing.T, path string) int {
	t.Helper()
	points, err := mount.Points()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range points {
		if p == filepath.Clean(path) {
			n++
		}
	}
	return n
}
