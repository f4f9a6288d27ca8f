package kuberuntime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/volume"
	"github.com/podlife/podlife/internal/crifake"
)

// filesPod is a pod whose containers have the API's default termination
// message path, "app" with FallbackToLogsOnError.
func filesPod(name string, policy v1.RestartPolicy) *v1.Pod {
	pod := crifake.MakePod(name, policy, crifake.Ctr{Name: "app"}, crifake.Ctr{Name: "side"})
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].TerminationMessagePath = v1.TerminationMessagePathDefault
		pod.Spec.Containers[i].TerminationMessagePolicy = v1.TerminationMessageReadFile
	}
	pod.Spec.Containers[0].TerminationMessagePolicy = v1.TerminationMessageFallbackToLogsOnError
	return pod
}

// recordMounts records the mounts of every CreateContainer, by container
// name and attempt.
func recordMounts(h *harness) func() map[string][]*runtimeapi.Mount {
	var mu sync.Mutex
	mounts := map[string][]*runtimeapi.Mount{}
	h.rt.OnCreate = func(_ context.Context, _ string, cfg *runtimeapi.ContainerConfig) error {
		mu.Lock()
		defer mu.Unlock()
		mounts[fmt.Sprintf("%s/%d", cfg.Metadata.Name, cfg.Metadata.Attempt)] = cfg.Mounts
		return nil
	}
	return func() map[string][]*runtimeapi.Mount {
		mu.Lock()
		defer mu.Unlock()
		return mounts
	}
}

// Every container gets the pod's hosts file at /etc/hosts and its own
// termination message file, empty and writable by anyone, both under the
// pod's directory; a restart gets a new message file.
func TestPodFileMounts(t *testing.T) {
	root := t.TempDir()
	h := newHarness(t, Options{PodsRoot: root}, "img")
	mounts := recordMounts(h)
	pod := filesPod("web", v1.RestartPolicyAlways)
	h.mustSync(pod)

	hosts := filepath.Join(root, "uid-web", "etc-hosts")
	for _, name := range []string{"app", "side"} {
		msg := filepath.Join(root, "uid-web", "containers", name, "0")
		want := []*runtimeapi.Mount{
			{ContainerPath: "/etc/hosts", HostPath: hosts},
			{ContainerPath: "/dev/termination-log", HostPath: msg},
		}
		if got := mounts()[name+"/0"]; !mountsEqual(got, want) {
			t.Errorf("mounts of %s: %v, want %v", name, got, want)
		}
		fi, err := os.Stat(msg)
		if err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o666 {
			t.Errorf("message file of %s: %v, %v; want empty, mode 0666", name, fi, err)
		}
	}
	content, err := os.ReadFile(hosts)
	if err != nil || !strings.Contains(string(content), "\n192.168.192.168\tweb\n") {
		t.Errorf("hosts file: %q, %v; want the sandbox's IP with the hostname", content, err)
	}

	h.exit(crifake.ContainerID(pod, 0, "app", 0), 1)
	h.clock.Step(time.Minute)
	h.mustSync(pod)
	if got := mounts()["app/1"]; len(got) != 2 || got[1].HostPath != filepath.Join(root, "uid-web", "containers", "app", "1") {
		t.Errorf("mounts of the restarted app: %v; want its own message file", got)
	}
}

// A custom terminationMessagePath is the mount's container path; a pod on
// the host network gets no /etc/hosts; without PodsRoot nothing is mounted.
func TestPodFileMountsVariants(t *testing.T) {
	t.Run("custom path", func(t *testing.T) {
		h := newHarness(t, Options{PodsRoot: t.TempDir()}, "img")
		mounts := recordMounts(h)
		pod := filesPod("web", v1.RestartPolicyAlways)
		pod.Spec.Containers[0].TerminationMessagePath = "/tmp/last-words"
		h.mustSync(pod)
		if got := mounts()["app/0"]; len(got) != 2 || got[1].ContainerPath != "/tmp/last-words" {
			t.Errorf("mounts: %v; want the message file at /tmp/last-words", got)
		}
	})
	t.Run("host network", func(t *testing.T) {
		root := t.TempDir()
		h := newHarness(t, Options{PodsRoot: root}, "img")
		mounts := recordMounts(h)
		pod := filesPod("web", v1.RestartPolicyAlways)
		pod.Spec.HostNetwork = true
		pod.Spec.HostAliases = []v1.HostAlias{{IP: "10.9.9.9", Hostnames: []string{"alias.local"}}}
		h.mustSync(pod)
		got := mounts()["app/0"]
		if len(got) != 2 || got[0].ContainerPath != "/etc/hosts" || got[1].ContainerPath != "/dev/termination-log" {
			t.Fatalf("mounts: %v; want the hosts file and the message file", got)
		}
		// The node's hosts file with the pod's aliases, as the kubelet
		// writes it for a pod on the host network.
		hosts, err := os.ReadFile(got[0].HostPath)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(hosts); !strings.HasPrefix(s, "# Kubernetes-managed hosts file (host network).\n") ||
			!strings.HasSuffix(s, "# Entries added by HostAliases.\n10.9.9.9\talias.local\n") {
			t.Errorf("hosts file of a host-network pod:\n%s", s)
		}
	})
	t.Run("no pods root", func(t *testing.T) {
		h := newHarness(t, Options{}, "img")
		mounts := recordMounts(h)
		h.mustSync(filesPod("web", v1.RestartPolicyAlways))
		if got := mounts()["app/0"]; len(got) != 0 {
			t.Errorf("mounts: %v; want none", got)
		}
	})
}

// What a container wrote to its message file is its terminated message,
// in the state and, once it restarted, in the last termination state; an
// empty file of a failed FallbackToLogsOnError container gives its log's
// tail.
func TestTerminationMessageReadBack(t *testing.T) {
	root := t.TempDir()
	h := newHarness(t, Options{PodsRoot: filepath.Join(root, "pods"), LogRoot: filepath.Join(root, "logs")}, "img")
	pod := filesPod("web", v1.RestartPolicyOnFailure)
	h.mustSync(pod)
	crifake.WriteFile(t, filepath.Join(root, "pods", "uid-web", "containers", "side", "0"), "side is done")
	crifake.WriteFile(t, filepath.Join(root, "logs", "ns_web_uid-web", "app", "0.log"), "2030-01-02T03:04:05Z stderr F panic: boom\n")
	h.exit(crifake.ContainerID(pod, 0, "side", 0), 0)
	h.exit(crifake.ContainerID(pod, 0, "app", 0), 2)
	h.mustSync(pod) // app is in back-off

	st := h.statuses.last(t, pod.UID)
	app, side := st.ContainerStatuses[0], st.ContainerStatuses[1]
	if got := side.State.Terminated; got == nil || got.Message != "side is done" {
		t.Errorf("side's state %+v; want terminated with its message", side.State)
	}
	if got := app.LastTerminationState.Terminated; got == nil || got.Message != "panic: boom\n" {
		t.Errorf("app's last termination %+v; want its log's tail", app.LastTerminationState)
	}

	h.clock.Step(time.Minute)
	h.mustSync(pod) // app restarts
	crifake.WriteFile(t, filepath.Join(root, "pods", "uid-web", "containers", "app", "1"), "second")
	h.exit(crifake.ContainerID(pod, 0, "app", 1), 0)
	if terminal, err := h.syncPod(pod); !terminal || err != nil {
		t.Fatalf("SyncPod = %v, %v; want terminal", terminal, err)
	}
	st = h.statuses.last(t, pod.UID)
	app = st.ContainerStatuses[0]
	if app.State.Terminated == nil || app.State.Terminated.Message != "second" || app.LastTerminationState.Terminated.Message != "panic: boom\n" {
		t.Errorf("app's states %+v, last %+v; want each instance's own message", app.State, app.LastTerminationState)
	}
}

// The pod's directory goes with the rest of the pod, once its sandboxes
// and containers are removed.
func TestPodDirRemovedWithPod(t *testing.T) {
	root := t.TempDir()
	h := newHarness(t, Options{PodsRoot: root}, "img")
	pod := filesPod("web", v1.RestartPolicyNever)
	h.mustSync(pod)
	dir := filepath.Join(root, "uid-web")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("no pod directory: %v", err)
	}
	h.s.RemoveDeadPod(pod.UID) // its sandbox is ready: not removed
	h.s.Close()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the pod directory went while the pod runs: %v", err)
	}
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	h.s.RemoveDeadPod(pod.UID)
	h.s.Close()
	if sbs, cs := h.podObjects(pod.UID); len(sbs)+len(cs) > 0 {
		t.Fatalf("pod left behind: %v %v", sbs, cs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("pod directory left behind: %v", err)
	}
}

// A UID that is no path element is refused before anything is written.
func TestPodFilesRefuseBadUID(t *testing.T) {
	root := t.TempDir()
	h := newHarness(t, Options{PodsRoot: filepath.Join(root, "pods")}, "img")
	pod := filesPod("web", v1.RestartPolicyAlways)
	pod.UID = ".."
	if _, err := h.syncPod(pod); err == nil || !strings.Contains(err.Error(), "cannot be part of a file path") {
		t.Errorf("SyncPod: %v; want the UID refused", err)
	}
	if err := volume.RemovePodDir(filepath.Join(root, "pods"), ".."); err == nil {
		t.Errorf("RemovePodDir(..) removed something")
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("written outside the pods root: %v", entries)
	}
}

// On the embedded runtime, through the real CRI client: a message written
// before the container exits is in its status.
func TestTerminationMessageEmbedded(t *testing.T) {
	emb, rt, images := embeddedClients(t)
	ctx := context.Background()
	statuses := &statusLog{}
	root := t.TempDir()
	s := NewSyncer(rt, images, Options{PodsRoot: root, Statuses: statuses})
	defer s.Close()
	pod := filesPod("web", v1.RestartPolicyNever)
	if terminal, err := s.SyncPod(ctx, 0, pod, nil, nil); terminal || err != nil {
		t.Fatalf("SyncPod = %v, %v", terminal, err)
	}
	crifake.WriteFile(t, filepath.Join(root, string(pod.UID), "containers", "app", "0"), "app wrote this")
	cs, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{cri.ContainerNameLabel: "app", cri.PodUIDLabel: string(pod.UID)}})
	if err != nil || len(cs) != 1 {
		t.Fatalf("containers %v, %v; want app", cs, err)
	}
	if err := emb.ExitContainer(cs[0].Id, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SyncPod(ctx, 0, pod, nil, nil); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	app := statuses.last(t, pod.UID).ContainerStatuses[0]
	if app.State.Terminated == nil || app.State.Terminated.Message != "app wrote this" {
		t.Errorf("app's state %+v; want terminated with its message", app.State)
	}
	if content, err := os.ReadFile(filepath.Join(root, string(pod.UID), "etc-hosts")); err != nil || !strings.Contains(string(content), "\tweb\n") {
		t.Errorf("hosts file %q, %v; want the pod's hostname", content, err)
	}
}

func mountsEqual(a, b []*runtimeapi.Mount) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ContainerPath != b[i].ContainerPath || a[i].HostPath != b[i].HostPath || a[i].Readonly != b[i].Readonly {
			return false
		}
	}
	return true
}

// The statuses the syncer writes hold the pod's messages within 12 KiB:
// four containers that wrote 4 KiB each get 3 KiB each.
func TestPodMessagesCappedInStatus(t *testing.T) {
	root := t.TempDir()
	h := newHarness(t, Options{PodsRoot: root}, "img")
	pod := crifake.MakePod("web", v1.RestartPolicyNever, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"}, crifake.Ctr{Name: "c"}, crifake.Ctr{Name: "d"})
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].TerminationMessagePath = v1.TerminationMessagePathDefault
	}
	h.mustSync(pod)
	for _, c := range pod.Spec.Containers {
		crifake.WriteFile(t, filepath.Join(root, "uid-web", "containers", c.Name, "0"), strings.Repeat(c.Name, 5000))
		h.exit(crifake.ContainerID(pod, 0, c.Name, 0), 0)
	}
	if terminal, err := h.syncPod(pod); !terminal || err != nil {
		t.Fatalf("SyncPod = %v, %v; want terminal", terminal, err)
	}
	for _, cs := range h.statuses.last(t, pod.UID).ContainerStatuses {
		if got := cs.State.Terminated; got == nil || got.Message != strings.Repeat(cs.Name, 3072) {
			t.Errorf("%s: state %+v; want 3 KiB of its message", cs.Name, cs.State)
		}
	}
}

// The hosts file a container appended to (it is mounted read-write) is not
// read back when the next container is created: that creation neither
// fails nor allocates the file's size, and the new container gets the
// managed content again, as the kubelet's rewrite gives it.
func TestHostsFileAppendedToIsNotReadBack(t *testing.T) {
	root := t.TempDir()
	h := newHarness(t, Options{PodsRoot: root}, "img")
	mounts := recordMounts(h)
	pod := filesPod("web", v1.RestartPolicyAlways)
	h.mustSync(pod)
	hosts := filepath.Join(root, "uid-web", "etc-hosts")
	managed, err := os.ReadFile(hosts)
	if err != nil {
		t.Fatal(err)
	}
	const huge = 256 << 20 // sparse: no disk, but a whole read allocates it
	if err := os.Truncate(hosts, huge); err != nil {
		t.Fatal(err)
	}
	h.exit(crifake.ContainerID(pod, 0, "app", 0), 1)
	h.clock.Step(time.Minute)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	h.mustSync(pod)
	runtime.ReadMemStats(&after)
	if got := mounts()["app/1"]; len(got) != 2 || got[0].HostPath != hosts {
		t.Fatalf("mounts of the restarted app: %v; want the hosts file", got)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc >= huge/4 {
		t.Errorf("the restart allocated %d bytes, a quarter of the hosts file's size or more: it was read back", alloc)
	} else {
		t.Logf("the restart's sync allocated %d bytes with a %d-byte hosts file", alloc, huge)
	}
	if got, err := os.ReadFile(hosts); err != nil || string(got) != string(managed) {
		t.Errorf("hosts file after the restart: %d bytes, %v; want the managed %d bytes", len(got), err, len(managed))
	}
}
