// Package crifake holds the fakes and small fixtures that the tests of
// podlife's CRI packages (cri/...) share: a fake runtime and image service
// with hooks in front of their calls, pods built the same way everywhere,
// the fake's IDs of their sandboxes and containers, files and mount points
// for the tests that make them.
//
// This is an ordinary package so that test files in other packages can
// import it; only tests should. Of the cri packages it imports only the
// root (whose own tests are external, package cri_test) and cri/mount, so
// that the others' tests can use it.
package crifake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakecri "k8s.io/cri-api/pkg/apis/testing"

	"github.com/podlife/podlife/cri"
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

// Ctr is a container spec with an image and a pull policy, and its own
// restart policy and rules (ContainerRestartRules) when Restart is set.
type Ctr struct {
	Name, Image string
	Pull        v1.PullPolicy
	Restart     v1.ContainerRestartPolicy
	Rules       []v1.ContainerRestartRule
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
		spec := v1.Container{Name: c.Name, Image: c.Image, ImagePullPolicy: c.Pull, RestartPolicyRules: c.Rules}
		if c.Restart != "" {
			spec.RestartPolicy = new(c.Restart)
		}
		pod.Spec.Containers = append(pod.Spec.Containers, spec)
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

// RestartOn is a restart rule: action Restart on the exit codes given
// (operator In).
func RestartOn(codes ...int32) []v1.ContainerRestartRule {
	return []v1.ContainerRestartRule{{
		Action:    v1.ContainerRestartRuleActionRestart,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: codes},
	}}
}

// Init is an init container of a test pod: a sidecar when restartable;
// else Restart and Rules, when set, are its own restart policy and rules.
type Init struct {
	Name    string
	Sidecar bool
	Restart v1.ContainerRestartPolicy
	Rules   []v1.ContainerRestartRule
}

// WithInits gives pod init containers, in order, with image "img".
func WithInits(pod *v1.Pod, inits ...Init) *v1.Pod {
	for _, ic := range inits {
		c := v1.Container{Name: ic.Name, Image: "img", ImagePullPolicy: v1.PullIfNotPresent}
		switch {
		case ic.Sidecar:
			c.RestartPolicy = new(v1.ContainerRestartPolicyAlways)
		case ic.Restart != "":
			c.RestartPolicy, c.RestartPolicyRules = new(ic.Restart), ic.Rules
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	return pod
}

// statusOf summarises one API container status: running, exited(code) or
// waiting(reason).
func statusOf(cs v1.ContainerStatus) string {
	switch {
	case cs.State.Running != nil:
		return "running"
	case cs.State.Terminated != nil:
		return fmt.Sprintf("exited(%d)", cs.State.Terminated.ExitCode)
	case cs.State.Waiting != nil:
		return "waiting(" + cs.State.Waiting.Reason + ")"
	}
	return "none"
}

// Statuses summarises API container statuses: name=state (statusOf) for
// each.
func Statuses(css []v1.ContainerStatus) string {
	var out []string
	for _, cs := range css {
		out = append(out, cs.Name+"="+statusOf(cs))
	}
	return strings.Join(out, " ")
}

// Condition is the pod status's condition of type typ, or the zero one.
func Condition(st v1.PodStatus, typ v1.PodConditionType) v1.PodCondition {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return v1.PodCondition{}
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

// ---- the runtime's view of a pod ---------------------------------------------

// The container states, short.
const (
	Running = runtimeapi.ContainerState_CONTAINER_RUNNING
	Exited  = runtimeapi.ContainerState_CONTAINER_EXITED
	Created = runtimeapi.ContainerState_CONTAINER_CREATED
)

// RuntimePod builds the runtime's view of pod "u" from its sandboxes and
// its container instances (Instance), given newest first.
func RuntimePod(sandboxes []*runtimeapi.PodSandbox, cs ...func() (*runtimeapi.ContainerStatus, string)) *cri.PodRuntime {
	p := &cri.PodRuntime{UID: "u", Sandboxes: sandboxes, SandboxOf: map[string]string{}}
	for _, f := range cs {
		c, sb := f()
		p.Containers = append(p.Containers, c)
		p.SandboxOf[c.Id] = sb
	}
	return p
}

// Instance is a container instance for RuntimePod: the runtime's status of
// it, in sandbox; its StartedAt and FinishedAt are 1 and 2 ns after
// createdAt.
func Instance(id, sandbox, name string, attempt uint32, state runtimeapi.ContainerState, exitCode int32, createdAt int64) func() (*runtimeapi.ContainerStatus, string) {
	return func() (*runtimeapi.ContainerStatus, string) {
		return &runtimeapi.ContainerStatus{
			Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
			State: state, ExitCode: exitCode, CreatedAt: createdAt, StartedAt: createdAt + 1, FinishedAt: createdAt + 2,
		}, sandbox
	}
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
