package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/devicemanager"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
	"github.com/podlife/podlife/internal/deviceplugintest"
)

// A device plugin registered with the agent on containerd: a pod asking
// for one of its devices runs with what the plugin's Allocate answered
// (an env var, a mounted file, a device node); a pod asking for more
// devices than are free is refused with the kubelet's
// UnexpectedAdmissionError; a finished pod's devices are free again.
func TestContainerdDevicePlugin(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	var root string
	a := e.StartAgent(manifests, func(c *config.Config) { root = c.RootDir })

	hostFile := filepath.Join(e.Dir, "device-info")
	if err := os.WriteFile(hostFile, []byte("dev-info"), 0o644); err != nil {
		t.Fatal(err)
	}
	const resource = "podlife.test/widget"
	p := deviceplugintest.Start(t, filepath.Join(root, devicemanager.DirName), "widget.sock",
		deviceplugintest.Devices(pluginapi.Healthy, "w0", "w1")...)
	p.Answer = func(ids []string) *pluginapi.ContainerAllocateResponse {
		return &pluginapi.ContainerAllocateResponse{
			Envs:    map[string]string{"WIDGETS": strings.Join(ids, ",")},
			Mounts:  []*pluginapi.Mount{{ContainerPath: "/run/widget/info", HostPath: hostFile, ReadOnly: true}},
			Devices: []*pluginapi.DeviceSpec{{ContainerPath: "/dev/widget", HostPath: "/dev/null", Permissions: "rw"}},
		}
	}
	if err := p.Register(filepath.Join(root, devicemanager.DirName, devicemanager.SocketName), resource); err != nil {
		t.Fatalf("Register: %v", err)
	}

	pod := func(name, uid string, n int) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  uid: %s
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: %s
    imagePullPolicy: Never
    command: [sh, -c, 'test -c /dev/widget && echo "$WIDGETS $(cat /run/widget/info)" > /dev/termination-log']
    resources:
      limits:
        %s: %d
`, name, agenttest.CtrdNamespace, uid, critest.BusyboxImage, resource, n)
	}
	uid := e.NewUID()
	writeManifest(t, manifests, "widget.yaml", pod("widget", uid, 1))
	var st v1.PodStatus
	agenttest.CtrdEventually(t, "the pod with a device succeeded", func() (bool, string) {
		var ok bool
		st, ok = a.PodStatus(types.UID(uid))
		return ok && st.Phase == v1.PodSucceeded, fmt.Sprintf("%+v", st)
	})
	if got, want := st.ContainerStatuses[0].State.Terminated.Message, "w0 dev-info\n"; got != want {
		t.Errorf("the container saw %q, want %q", got, want)
	}
	if got := p.Allocations(); len(got) != 1 || len(got[0]) != 1 || got[0][0] != "w0" {
		t.Errorf("Allocate calls %v, want one for w0", got)
	}

	greedy := e.NewUID()
	writeManifest(t, manifests, "greedy.yaml", pod("greedy", greedy, 3))
	agenttest.CtrdEventually(t, "the pod asking for 3 devices refused", func() (bool, string) {
		st, ok := a.PodStatus(types.UID(greedy))
		// Available: 1 while the first pod still holds its device.
		return ok && st.Phase == v1.PodFailed && st.Reason == devicemanager.ReasonUnexpectedAdmissionError &&
			strings.HasPrefix(st.Message, "Allocate failed due to requested number of devices unavailable for podlife.test/widget. Requested: 3, Available: ") &&
			strings.HasSuffix(st.Message, ", which is unexpected"), fmt.Sprintf("%+v", st)
	})

	// Once the engine finished the first pod, its device is free again
	// for a pod that asks for both.
	a.WaitPod(uid, "the engine finished the pod", func(p api.PodInfo) bool { return p.Worker == "terminated" })
	pair := e.NewUID()
	writeManifest(t, manifests, "pair.yaml", pod("pair", pair, 2))
	agenttest.CtrdEventually(t, "the pod with both devices succeeded", func() (bool, string) {
		var ok bool
		st, ok = a.PodStatus(types.UID(pair))
		return ok && st.Phase == v1.PodSucceeded, fmt.Sprintf("%+v", st)
	})
	if got, want := st.ContainerStatuses[0].State.Terminated.Message, "w0,w1 dev-info\n"; got != want {
		t.Errorf("the container saw %q, want %q", got, want)
	}
}

// An agent restarted on the same root directory keeps the device of the
// pod that runs on: a pod asking for both devices is refused (the
// checkpoint), not handed the running pod's device.
func TestContainerdDevicePluginRestart(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	root := filepath.Join(e.Dir, "root-devices")
	sameRoot := func(c *config.Config) { c.RootDir = root }
	dir := filepath.Join(root, devicemanager.DirName)
	kubeletSocket := filepath.Join(dir, devicemanager.SocketName)
	const resource = "podlife.test/widget"
	register := func(socket string) {
		t.Helper()
		p := deviceplugintest.Start(t, dir, socket, deviceplugintest.Devices(pluginapi.Healthy, "w0", "w1")...)
		if err := p.Register(kubeletSocket, resource); err != nil {
			t.Fatalf("Register: %v", err)
		}
	}
	pod := func(name, uid string, n int) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  uid: %s
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: %s
    imagePullPolicy: Never
    command: [sh, -c, 'trap "exit 0" TERM; while true; do sleep 0.2; done']
    resources:
      limits:
        %s: %d
`, name, agenttest.CtrdNamespace, uid, critest.BusyboxImage, resource, n)
	}
	a := e.StartAgent(manifests, sameRoot)
	register("widget.sock")
	uid := e.NewUID()
	writeManifest(t, manifests, "widget.yaml", pod("widget", uid, 1))
	a.WaitRunning(uid, 1)
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}

	// Found with the running pod's manifest when the agent starts again,
	// and admitted first (the manifests in name order).
	greedy := e.NewUID()
	writeManifest(t, manifests, "greedy.yaml", pod("greedy", greedy, 2))
	b := e.StartAgent(manifests, sameRoot)
	register("widget2.sock")
	b.WaitRunning(uid, 1)
	agenttest.CtrdEventually(t, "the pod asking for both devices refused", func() (bool, string) {
		st, ok := b.PodStatus(types.UID(greedy))
		// Before the plugin registers again the resource has no device
		// (as after a kubelet's restart); after, one is free.
		return ok && st.Phase == v1.PodFailed && st.Reason == devicemanager.ReasonUnexpectedAdmissionError &&
			(st.Message == "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices podlife.test/widget, which is unexpected" ||
				st.Message == "Allocate failed due to requested number of devices unavailable for podlife.test/widget. Requested: 2, Available: 1, which is unexpected"), fmt.Sprintf("%+v", st)
	})
}
