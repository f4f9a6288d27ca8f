package kuberuntime

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/crifake"
)

func TestSandboxConfig(t *testing.T) {
	long := strings.Repeat("x", 70)
	for _, tc := range []struct {
		name         string
		edit         func(*v1.Pod)
		wantHostname string
		wantNetwork  runtimeapi.NamespaceMode
	}{
		{"defaults", func(*v1.Pod) {}, "p", runtimeapi.NamespaceMode_POD},
		{"spec hostname", func(p *v1.Pod) { p.Spec.Hostname = "host" }, "host", runtimeapi.NamespaceMode_POD},
		// A hostname is a DNS label already; a pod name or a hostnameOverride
		// may be longer, and is cut.
		{"long hostname", func(p *v1.Pod) { p.Spec.HostnameOverride = &long }, long[:63], runtimeapi.NamespaceMode_POD},
		{"long name cut before a dash", func(p *v1.Pod) { p.Spec.HostnameOverride = new(strings.Repeat("y", 62) + "-zz") }, strings.Repeat("y", 62), runtimeapi.NamespaceMode_POD},
		{"host network: the node's hostname", func(p *v1.Pod) { p.Spec.HostNetwork = true }, "", runtimeapi.NamespaceMode_NODE},
		{"hostnameOverride wins", func(p *v1.Pod) { p.Spec.Hostname, p.Spec.HostnameOverride = "custom-host", new("override-host") },
			"override-host", runtimeapi.NamespaceMode_POD},
		{"setHostnameAsFQDN", func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = "h", "sub", new(true) },
			"h.sub.ns.svc.cluster.local", runtimeapi.NamespaceMode_POD},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
			pod.Labels = map[string]string{"app": "x", cri.PodNameLabel: "spoofed"}
			pod.Annotations = map[string]string{"note": "n"}
			tc.edit(pod)
			cfg, err := sandboxConfig(pod, 3, "")
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Hostname != tc.wantHostname {
				t.Errorf("hostname %q, want %q", cfg.Hostname, tc.wantHostname)
			}
			if got := cfg.Linux.SecurityContext.NamespaceOptions.Network; got != tc.wantNetwork {
				t.Errorf("network %v", got)
			}
			m := cfg.Metadata
			if m.Name != "p" || m.Namespace != "ns" || m.Uid != "uid-p" || m.Attempt != 3 {
				t.Errorf("metadata %v", m)
			}
			if cfg.Labels[cri.PodNameLabel] != "p" || cfg.Labels["app"] != "x" || cfg.Labels[cri.PodUIDLabel] != "uid-p" {
				t.Errorf("labels %v", cfg.Labels)
			}
			if cfg.LogDirectory != "" {
				t.Errorf("log directory %q without a log root", cfg.LogDirectory)
			}
			cfg.Annotations["note"] = "changed"
			if pod.Annotations["note"] != "n" {
				t.Error("the config shares the pod's annotations")
			}
		})
	}
}

func TestContainerConfig(t *testing.T) {
	pod := crifake.MakePod("p", v1.RestartPolicyAlways)
	pod.Spec.TerminationGracePeriodSeconds = new(int64(12))
	c := &v1.Container{
		Name: "app", Image: "repo/app:1", Command: []string{"/bin/app"}, Args: []string{"-v"}, WorkingDir: "/w",
		Stdin: true, StdinOnce: true, TTY: true,
	}
	cfg, err := containerConfig(pod, c, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Metadata.Name != "app" || cfg.Metadata.Attempt != 2 || cfg.Image.Image != "repo/app:1" ||
		cfg.Command[0] != "/bin/app" || cfg.Args[0] != "-v" || cfg.WorkingDir != "/w" || cfg.LogPath != "app/2.log" ||
		!cfg.Stdin || !cfg.StdinOnce || !cfg.Tty {
		t.Errorf("config %v", cfg)
	}
	if cfg.Annotations[cri.RestartCountAnnotation] != "2" || cfg.Annotations[cri.GracePeriodAnnotation] != "12" {
		t.Errorf("annotations %v", cfg.Annotations)
	}
	if cfg.Labels[cri.ContainerNameLabel] != "app" || cfg.Labels[cri.PodUIDLabel] != "uid-p" {
		t.Errorf("labels %v", cfg.Labels)
	}
	// Without them containerd puts the container in the sandbox's PID
	// namespace, where its process is not PID 1.
	if ns := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions(); ns.GetPid() != runtimeapi.NamespaceMode_CONTAINER ||
		ns.GetNetwork() != runtimeapi.NamespaceMode_POD || ns.GetIpc() != runtimeapi.NamespaceMode_POD {
		t.Errorf("namespace options %v, want the pod's: PID per container, network and IPC per pod", ns)
	}
	if cfg, err := containerConfig(pod, c, 0, false); err != nil || cfg.LogPath != "" {
		t.Errorf("without logs: log path %q, %v", cfg.GetLogPath(), err)
	}
}

// No value of a pod leads its logs out of the log root: the sync fails,
// saying which value, and creates nothing anywhere.
func TestSyncPodLogDirectoryStaysUnderRoot(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*v1.Pod)
		want []string // in the sync's error
		// wantSandbox: the bad value is the container's, found once the
		// sandbox ran.
		wantSandbox bool
	}{
		{"uid climbing out", func(p *v1.Pod) { p.UID = "x/../../../escaped" }, []string{"pod ns/p", `metadata.uid "x/../../../escaped"`}, false},
		{"name ..", func(p *v1.Pod) { p.Name = ".." }, []string{"pod ns/..", `metadata.name ".."`}, false},
		{"container name climbing out", func(p *v1.Pod) { p.Spec.Containers[0].Name = "../../../escaped" }, []string{"pod ns/p", `container name "../../../escaped"`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			// Deep enough that a climb of three stays in base, where the
			// test can see it.
			root := filepath.Join(base, "a", "b", "logs")
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, Options{LogRoot: root}, "img")
			pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "c"})
			tc.edit(pod)
			_, err := h.syncPod(pod)
			for _, want := range tc.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("SyncPod error %v does not mention %s", err, want)
				}
			}
			if n := h.calls("CreateContainer"); n != 0 {
				t.Errorf("CreateContainer called %d times", n)
			}
			if n := h.calls("RunPodSandbox"); (n > 0) != tc.wantSandbox {
				t.Errorf("RunPodSandbox called %d times", n)
			}
			ancestors := map[string]bool{}
			for dir := filepath.Dir(root); dir != filepath.Dir(base); dir = filepath.Dir(dir) {
				ancestors[dir] = true
			}
			err = filepath.WalkDir(base, func(path string, _ fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if rel, _ := filepath.Rel(root, path); !filepath.IsLocal(rel) && !ancestors[path] {
					t.Errorf("%s was created outside the log root %s", path, root)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
