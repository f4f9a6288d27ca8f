package devicemanager_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/agent/devicemanager"
	"github.com/podlife/podlife/internal/deviceplugintest"
)

const resourceName = "test.device/gpu"

// pollTimeout is generous: the machine is small and shared.
const pollTimeout = 30 * time.Second

// startManager starts a manager on a temporary directory with a fake
// clock, stopped when the test ends.
func startManager(t *testing.T) (*devicemanager.Manager, *clocktesting.FakeClock, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), devicemanager.DirName)
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m, err := devicemanager.New(devicemanager.Config{Dir: dir, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m, clock, dir
}

// value is a resource's (allocatable, capacity) as the node e2e suite
// reads them: -1 when absent.
type value struct{ Allocatable, Capacity int }

func valueOf(m *devicemanager.Manager, name string) value {
	capacity, allocatable := m.Resources()
	v := value{-1, -1}
	if q, ok := capacity[v1.ResourceName(name)]; ok {
		v.Capacity = int(q.Value())
	}
	if q, ok := allocatable[v1.ResourceName(name)]; ok {
		v.Allocatable = int(q.Value())
	}
	return v
}

// waitValue waits until the resource's values are want.
func waitValue(t *testing.T, m *devicemanager.Manager, name string, want value) {
	t.Helper()
	var got value
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, pollTimeout, true, func(context.Context) (bool, error) {
		got = valueOf(m, name)
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("%s: got %+v, want %+v", name, got, want)
	}
}

func TestHealthFollowsListAndWatch(t *testing.T) {
	m, _, dir := startManager(t)
	p := deviceplugintest.Start(t, dir, "gpu.sock", deviceplugintest.Devices(pluginapi.Healthy, "0", "1", "2", "3")...)
	if err := p.Register(m.SocketPath(), resourceName); err != nil {
		t.Fatal(err)
	}
	waitValue(t, m, resourceName, value{4, 4})
	for _, step := range []struct {
		health string
		ids    []string
		want   value
	}{
		{pluginapi.Unhealthy, []string{"3"}, value{3, 4}},
		{pluginapi.Healthy, []string{"3"}, value{4, 4}},
		{pluginapi.Unhealthy, []string{"1", "3"}, value{2, 4}},
		{pluginapi.Healthy, []string{"3"}, value{3, 4}},
		{pluginapi.Healthy, []string{"1"}, value{4, 4}},
	} {
		p.SetHealth(step.health, step.ids...)
		waitValue(t, m, resourceName, step.want)
	}
	if got, want := p.Calls(), []string{"GetDevicePluginOptions", "ListAndWatch"}; !slices.Equal(got, want) {
		t.Errorf("plugin calls %v, want %v", got, want)
	}
}

// TestPluginFailures follows the node e2e suite's "Device Plugin
// Failures": a plugin whose GetDevicePluginOptions fails is not used; one
// whose ListAndWatch fails, or that stops, leaves allocatable 0 and is not
// called again; its capacity drops to 0 after the grace period.
func TestPluginFailures(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fail        string // the method failing from the start
		registerErr []string
		before      value // after the registration
		breakIt     func(p *deviceplugintest.Plugin)
		after       value // once the plugin failed
		calls       []string
		expired     value // after the grace period
	}{{
		name: "GetDevicePluginOptions fails", fail: "GetDevicePluginOptions",
		registerErr: []string{"failed to get device plugin options", "GetDevicePluginOptions failed"},
		before:      value{-1, -1}, after: value{-1, -1}, expired: value{-1, -1},
		calls: []string{"GetDevicePluginOptions"},
	}, {
		name: "ListAndWatch fails immediately", fail: "ListAndWatch",
		before: value{0, 0}, after: value{0, 0}, expired: value{0, 0},
		calls: []string{"GetDevicePluginOptions", "ListAndWatch"},
	}, {
		name:   "ListAndWatch fails after provisioning",
		before: value{2, 2}, breakIt: (*deviceplugintest.Plugin).FailListAndWatch, after: value{0, 2}, expired: value{0, 0},
		calls: []string{"GetDevicePluginOptions", "ListAndWatch"},
	}, {
		name:   "plugin stops after provisioning",
		before: value{2, 2}, breakIt: func(p *deviceplugintest.Plugin) { p.Stop() }, after: value{0, 2}, expired: value{0, 0},
		calls: []string{"GetDevicePluginOptions", "ListAndWatch"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m, clock, dir := startManager(t)
			p := deviceplugintest.Start(t, dir, "gpu.sock", deviceplugintest.Devices(pluginapi.Healthy, "0", "1")...)
			if tc.fail != "" {
				p.Fail(tc.fail, errorf(tc.fail+" failed"))
			}
			err := p.Register(m.SocketPath(), resourceName)
			for _, want := range tc.registerErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Register: %v, want an error with %q", err, want)
				}
			}
			if tc.registerErr == nil && err != nil {
				t.Fatalf("Register: %v", err)
			}
			waitValue(t, m, resourceName, tc.before)
			if tc.breakIt != nil {
				tc.breakIt(p)
			}
			waitValue(t, m, resourceName, tc.after)
			if got := p.Calls(); !slices.Equal(got, tc.calls) {
				t.Errorf("plugin calls %v, want %v (no retry)", got, tc.calls)
			}
			clock.Step(5 * time.Minute)
			if got := valueOf(m, resourceName); got != tc.after {
				t.Errorf("at the end of the grace period: %+v, want %+v", got, tc.after)
			}
			clock.Step(time.Second)
			if got := valueOf(m, resourceName); got != tc.expired {
				t.Errorf("after the grace period: %+v, want %+v", got, tc.expired)
			}
			if got := valueOf(m, resourceName); got != tc.expired {
				t.Errorf("read again after the grace period: %+v, want %+v", got, tc.expired)
			}
		})
	}
}

type errorf string

func (e errorf) Error() string { return string(e) }

func TestRegistrationRefusals(t *testing.T) {
	m, _, dir := startManager(t)
	p := deviceplugintest.Start(t, dir, "gpu.sock", deviceplugintest.Devices(pluginapi.Healthy, "0")...)
	for _, tc := range []struct{ resource, want string }{
		{"gpu", `the ResourceName "gpu" is invalid`},
		{"kubernetes.io/gpu", `the ResourceName "kubernetes.io/gpu" is invalid`},
		{"cpu", `the ResourceName "cpu" is invalid`},
	} {
		if err := p.Register(m.SocketPath(), tc.resource); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Register %s: %v, want %q", tc.resource, err, tc.want)
		}
	}
	if err := p.Register(m.SocketPath(), resourceName); err != nil {
		t.Fatal(err)
	}
	if err := p.Register(m.SocketPath(), resourceName); err == nil || !strings.Contains(err.Error(), "device plugin already connected") {
		t.Errorf("second Register: %v, want already connected", err)
	}
}

func TestStartRemovesStaleSockets(t *testing.T) {
	m, _, dir := startManager(t)
	deviceplugintest.Start(t, dir, "old.sock")
	if err := os.WriteFile(filepath.Join(dir, "notes"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m.Stop()
	m2, err := devicemanager.New(devicemanager.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.Start(); err != nil {
		t.Fatal(err)
	}
	defer m2.Stop()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"kubelet.sock", "notes"}; !slices.Equal(names, want) {
		t.Errorf("directory holds %v, want %v", names, want)
	}
}

// devicePod is a pod whose containers ask for n devices each (limits).
func devicePod(uid string, init []int, regular ...int) *v1.Pod {
	c := func(name string, n int) v1.Container {
		rl := v1.ResourceList{resourceName: *resource.NewQuantity(int64(n), resource.DecimalSI)}
		return v1.Container{Name: name, Resources: v1.ResourceRequirements{Limits: rl, Requests: rl}}
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "default", UID: types.UID(uid)}}
	for i, n := range init {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c("init"+string(rune('a'+i)), n))
	}
	for i, n := range regular {
		pod.Spec.Containers = append(pod.Spec.Containers, c("c"+string(rune('a'+i)), n))
	}
	return pod
}

func TestAdmissionAndAllocation(t *testing.T) {
	m, _, dir := startManager(t)
	p := deviceplugintest.Start(t, dir, "gpu.sock", deviceplugintest.Devices(pluginapi.Healthy, "0", "1")...)
	p.Options.PreStartRequired = true
	if err := p.Register(m.SocketPath(), resourceName); err != nil {
		t.Fatal(err)
	}
	waitValue(t, m, resourceName, value{2, 2})

	a := devicePod("a", nil, 1)
	if err := m.Admit(a, nil); err != nil {
		t.Fatalf("Admit a: %v", err)
	}
	b := devicePod("b", nil, 2)
	err := m.Admit(b, []*v1.Pod{a})
	want := "Allocate failed due to requested number of devices unavailable for test.device/gpu. Requested: 2, Available: 1, which is unexpected"
	if err == nil || err.Error() != want {
		t.Fatalf("Admit b: %v, want %q", err, want)
	}

	// The container's config gets the plugin's answer, asked once.
	cfg := &runtimeapi.ContainerConfig{
		Envs:        []*runtimeapi.KeyValue{{Key: "OWN", Value: []byte("1")}},
		Mounts:      []*runtimeapi.Mount{{ContainerPath: "/data", HostPath: "/srv/data"}},
		Annotations: map[string]string{"io.kubernetes.container.name": "ca"},
	}
	if err := m.AddDevices(context.Background(), a, &a.Spec.Containers[0], &runtimeapi.ContainerConfig{}); err != nil {
		t.Fatal(err)
	}
	if err := m.AddDevices(context.Background(), a, &a.Spec.Containers[0], cfg); err != nil {
		t.Fatal(err) // a second instance of the container: the answer kept
	}
	if got, want := keys(cfg.Envs), []string{"DEVICE_0", "OWN"}; !slices.Equal(got, want) {
		t.Errorf("envs %v, want %v", got, want)
	}
	if len(cfg.Mounts) != 2 || cfg.Mounts[1].ContainerPath != "/dev-state/0" || !cfg.Mounts[1].Readonly {
		t.Errorf("mounts %v, want /data then /dev-state/0 read-only", cfg.Mounts)
	}
	if len(cfg.Devices) != 1 || cfg.Devices[0].ContainerPath != "/dev/test0" || cfg.Devices[0].Permissions != "rw" {
		t.Errorf("devices %v, want /dev/test0 rw", cfg.Devices)
	}
	if cfg.Annotations["test.device/0"] != "allocated" || cfg.Annotations["io.kubernetes.container.name"] != "ca" {
		t.Errorf("annotations %v", cfg.Annotations)
	}
	if got := p.Allocations(); !slices.EqualFunc(got, [][]string{{"0"}}, slices.Equal) {
		t.Errorf("Allocate calls %v, want one for device 0", got)
	}
	if p.PreStarts() != 2 {
		t.Errorf("PreStartContainer called %d times, want once per creation (2)", p.PreStarts())
	}

	// Pod a's devices are freed once it no longer holds node resources.
	if err := m.Admit(b, nil); err != nil {
		t.Fatalf("Admit b after a ended: %v", err)
	}
	if got := m.Devices("b", "ca"); !slices.Equal(got[resourceName], []string{"0", "1"}) {
		t.Errorf("b's devices %v", got)
	}
	if got := m.Devices("a", "ca"); len(got) != 0 {
		t.Errorf("a's devices %v after it ended", got)
	}

	// With every device unhealthy, a pod is refused.
	m.Sweep(nil)
	p.SetHealth(pluginapi.Unhealthy, "0", "1")
	waitValue(t, m, resourceName, value{0, 2})
	err = m.Admit(devicePod("c", nil, 1), nil)
	want = "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices test.device/gpu, which is unexpected"
	if err == nil || err.Error() != want {
		t.Errorf("Admit c: %v, want %q", err, want)
	}
	// A pod asking for no device plugin's resource is none of its business.
	if err := m.Admit(&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "d"}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "x"}}}}, nil); err != nil {
		t.Errorf("Admit a pod without devices: %v", err)
	}
}

func TestAllocationPlan(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pod     *v1.Pod
		devices map[string][]string // container -> devices
		err     string
	}{
		{name: "one container", pod: devicePod("p", nil, 2), devices: map[string][]string{"ca": {"0", "1"}}},
		{name: "two containers", pod: devicePod("p", nil, 1, 2), devices: map[string][]string{"ca": {"0"}, "cb": {"1", "2"}}},
		{name: "init devices reused", pod: devicePod("p", []int{3}, 2, 1), devices: map[string][]string{"inita": {"0", "1", "2"}, "ca": {"0", "1"}, "cb": {"2"}}},
		{name: "too many", pod: devicePod("p", nil, 2, 3), err: "requested number of devices unavailable for test.device/gpu. Requested: 3, Available: 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, dir := startManager(t)
			p := deviceplugintest.Start(t, dir, "gpu.sock", deviceplugintest.Devices(pluginapi.Healthy, "0", "1", "2", "3")...)
			if err := p.Register(m.SocketPath(), resourceName); err != nil {
				t.Fatal(err)
			}
			waitValue(t, m, resourceName, value{4, 4})
			err := m.Admit(tc.pod, nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Admit: %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for c, want := range tc.devices {
				if got := m.Devices(tc.pod.UID, c)[resourceName]; !slices.Equal(got, want) {
					t.Errorf("container %s: devices %v, want %v", c, got, want)
				}
			}
		})
	}
}

func keys(kv []*runtimeapi.KeyValue) []string {
	var out []string
	for _, e := range kv {
		out = append(out, e.Key)
	}
	return out
}

// TestAllocatedResourcesStatus: a container's status says the health of
// its devices, and the pods holding a device whose health changed are
// named to OnHealth (the node e2e suite's "Device Plugin Failures Pod
// Status").
func TestAllocatedResourcesStatus(t *testing.T) {
	dir := filepath.Join(t.TempDir(), devicemanager.DirName)
	health := make(chan []types.UID, 16)
	m, err := devicemanager.New(devicemanager.Config{Dir: dir, OnHealth: func(pods []types.UID) { health <- pods }})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	p := deviceplugintest.Start(t, dir, "gpu.sock", deviceplugintest.Devices(pluginapi.Healthy, "testdevice")...)
	if err := p.Register(m.SocketPath(), resourceName); err != nil {
		t.Fatal(err)
	}
	waitValue(t, m, resourceName, value{1, 1})
	pod := devicePod("a", nil, 1, 0)
	if err := m.Admit(pod, nil); err != nil {
		t.Fatal(err)
	}
	statusSays := func(want v1.ResourceHealthStatus) {
		t.Helper()
		st := v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "ca"}, {Name: "cb"}}}
		m.SetAllocatedResourcesStatus(pod, &st)
		wantStatus := []v1.ResourceStatus{{Name: resourceName, Resources: []v1.ResourceHealth{{ResourceID: "testdevice", Health: want}}}}
		if got := st.ContainerStatuses[0].AllocatedResourcesStatus; !slices.EqualFunc(got, wantStatus, func(a, b v1.ResourceStatus) bool {
			return a.Name == b.Name && slices.Equal(a.Resources, b.Resources)
		}) {
			t.Errorf("container ca: %+v, want %+v", got, wantStatus)
		}
		if got := st.ContainerStatuses[1].AllocatedResourcesStatus; got != nil {
			t.Errorf("container cb, without devices: %+v, want none", got)
		}
	}
	statusSays(v1.ResourceHealthStatusHealthy)
	p.SetHealth(pluginapi.Unhealthy, "testdevice")
	select {
	case got := <-health:
		if !slices.Equal(got, []types.UID{"a"}) {
			t.Errorf("OnHealth(%v), want [a]", got)
		}
	case <-time.After(pollTimeout):
		t.Fatal("OnHealth not called after the device became unhealthy")
	}
	statusSays(v1.ResourceHealthStatusUnhealthy)
}

// TestTwoPluginsAnswers: a container with devices of two plugins gets
// both answers, the first resource's (by name) where they collide on an
// env var or a container path.
func TestTwoPluginsAnswers(t *testing.T) {
	m, _, dir := startManager(t)
	for _, r := range []struct{ resource, socket, value string }{
		{"b.test/y", "y.sock", "from-y"},
		{"a.test/x", "x.sock", "from-x"},
	} {
		p := deviceplugintest.Start(t, dir, r.socket, deviceplugintest.Devices(pluginapi.Healthy, "0")...)
		p.Answer = func(ids []string) *pluginapi.ContainerAllocateResponse {
			return &pluginapi.ContainerAllocateResponse{
				Envs:   map[string]string{"SHARED": r.value, "ONLY_" + r.value[5:]: "1"},
				Mounts: []*pluginapi.Mount{{ContainerPath: "/shared", HostPath: "/host/" + r.value}},
			}
		}
		if err := p.Register(m.SocketPath(), r.resource); err != nil {
			t.Fatal(err)
		}
		waitValue(t, m, r.resource, value{1, 1})
	}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "p"}, Spec: v1.PodSpec{Containers: []v1.Container{{
		Name: "c", Resources: v1.ResourceRequirements{Limits: v1.ResourceList{"a.test/x": one, "b.test/y": one}},
	}}}}
	if err := m.Admit(pod, nil); err != nil {
		t.Fatal(err)
	}
	cfg := &runtimeapi.ContainerConfig{}
	if err := m.AddDevices(context.Background(), pod, &pod.Spec.Containers[0], cfg); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range cfg.Envs {
		env[kv.Key] = string(kv.Value)
	}
	if want := map[string]string{"SHARED": "from-x", "ONLY_x": "1", "ONLY_y": "1"}; !maps.Equal(env, want) {
		t.Errorf("env %v, want %v", env, want)
	}
	if len(cfg.Mounts) != 1 || cfg.Mounts[0].HostPath != "/host/from-x" {
		t.Errorf("mounts %v, want /shared from /host/from-x only", cfg.Mounts)
	}
}

// TestPluginRegistersAgain: a plugin that stopped and registers again
// (a new process on the same socket) serves its resource anew.
func TestPluginRegistersAgain(t *testing.T) {
	m, _, dir := startManager(t)
	old := deviceplugintest.Start(t, dir, "gpu.sock", deviceplugintest.Devices(pluginapi.Healthy, "0", "1")...)
	if err := old.Register(m.SocketPath(), resourceName); err != nil {
		t.Fatal(err)
	}
	waitValue(t, m, resourceName, value{2, 2})
	old.Stop()
	waitValue(t, m, resourceName, value{0, 2})
	renewed := deviceplugintest.Start(t, dir, "gpu.sock", deviceplugintest.Devices(pluginapi.Healthy, "0", "1", "2")...)
	if err := renewed.Register(m.SocketPath(), resourceName); err != nil {
		t.Fatal(err)
	}
	waitValue(t, m, resourceName, value{3, 3})
	if err := m.Admit(devicePod("p", nil, 3), nil); err != nil {
		t.Errorf("Admit after the plugin registered again: %v", err)
	}
}

// TestRestartKeepsAllocations: a manager started again on the same
// directory (an agent restarted) keeps the devices of the pods allocated
// before, and their plugins' answers, until a sweep says those pods are
// gone; their resources are there with no device until the plugins
// register again.
func TestRestartKeepsAllocations(t *testing.T) {
	dir := filepath.Join(t.TempDir(), devicemanager.DirName)
	start := func() *devicemanager.Manager {
		m, err := devicemanager.New(devicemanager.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Stop)
		return m
	}
	m := start()
	p := deviceplugintest.Start(t, dir, "gpu.sock", deviceplugintest.Devices(pluginapi.Healthy, "0", "1")...)
	if err := p.Register(m.SocketPath(), resourceName); err != nil {
		t.Fatal(err)
	}
	waitValue(t, m, resourceName, value{2, 2})
	a := devicePod("a", nil, 1)
	if err := m.Admit(a, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.AddDevices(context.Background(), a, &a.Spec.Containers[0], &runtimeapi.ContainerConfig{}); err != nil {
		t.Fatal(err)
	}
	m.Stop()

	m = start()
	if got := valueOf(m, resourceName); got != (value{0, 0}) {
		t.Errorf("restarted, before the plugin registers again: %+v, want {0 0}", got)
	}
	p2 := deviceplugintest.Start(t, dir, "gpu2.sock", deviceplugintest.Devices(pluginapi.Healthy, "0", "1")...)
	if err := p2.Register(m.SocketPath(), resourceName); err != nil {
		t.Fatal(err)
	}
	waitValue(t, m, resourceName, value{2, 2})
	b := devicePod("b", nil, 2)
	if err := m.Admit(b, nil); err == nil || !strings.Contains(err.Error(), "Available: 1") {
		t.Errorf("Admit b before a sweep: %v, want a's device kept", err)
	}
	if err := m.Admit(a, nil); err != nil {
		t.Fatal(err)
	}
	if got := m.Devices("a", "ca")[resourceName]; !slices.Equal(got, []string{"0"}) {
		t.Errorf("a's devices after the restart: %v, want [0]", got)
	}
	cfg := &runtimeapi.ContainerConfig{}
	if err := m.AddDevices(context.Background(), a, &a.Spec.Containers[0], cfg); err != nil {
		t.Fatal(err)
	}
	if got := keys(cfg.Envs); !slices.Equal(got, []string{"DEVICE_0"}) {
		t.Errorf("a's env after the restart: %v, want the answer kept", got)
	}
	if got := p2.Allocations(); len(got) != 0 {
		t.Errorf("the plugin was asked again: %v", got)
	}
	m.Sweep(nil)
	if err := m.Admit(b, nil); err != nil {
		t.Errorf("Admit b after the sweep: %v", err)
	}
}

// TestSocketPathTooLong: under a root directory too deep for a unix
// socket the manager starts without its registration socket (and says so
// in its log) rather than failing the agent.
func TestSocketPathTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100), devicemanager.DirName)
	m, err := devicemanager.New(devicemanager.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer m.Stop()
	if _, err := os.Stat(m.SocketPath()); !os.IsNotExist(err) {
		t.Errorf("registration socket at a path too long: %v", err)
	}
	if capacity, _ := m.Resources(); len(capacity) != 0 {
		t.Errorf("resources %v, want none", capacity)
	}
}
