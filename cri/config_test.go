package cri

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
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
		{"long hostname", func(p *v1.Pod) { p.Spec.Hostname = long }, long[:63], runtimeapi.NamespaceMode_POD},
		{"host network", func(p *v1.Pod) { p.Spec.HostNetwork = true }, "p", runtimeapi.NamespaceMode_NODE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := makePod("p", v1.RestartPolicyAlways, ctr{name: "a"})
			pod.Labels = map[string]string{"app": "x", PodNameLabel: "spoofed"}
			pod.Annotations = map[string]string{"note": "n"}
			tc.edit(pod)
			cfg := sandboxConfig(pod, 3, "")
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
			if cfg.Labels[PodNameLabel] != "p" || cfg.Labels["app"] != "x" || cfg.Labels[PodUIDLabel] != "uid-p" {
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
	pod := makePod("p", v1.RestartPolicyAlways)
	pod.Spec.TerminationGracePeriodSeconds = new(int64(12))
	c := &v1.Container{
		Name: "app", Image: "repo/app:1", Command: []string{"/bin/app"}, Args: []string{"-v"}, WorkingDir: "/w",
		Env: []v1.EnvVar{
			{Name: "A", Value: "1"},
			{Name: "FROM", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		},
	}
	cfg := containerConfig(pod, c, 2, true)
	if cfg.Metadata.Name != "app" || cfg.Metadata.Attempt != 2 || cfg.Image.Image != "repo/app:1" ||
		cfg.Command[0] != "/bin/app" || cfg.Args[0] != "-v" || cfg.WorkingDir != "/w" || cfg.LogPath != "app/2.log" {
		t.Errorf("config %v", cfg)
	}
	if len(cfg.Envs) != 1 || cfg.Envs[0].Key != "A" || string(cfg.Envs[0].Value) != "1" {
		t.Errorf("envs %v", cfg.Envs)
	}
	if cfg.Annotations[RestartCountAnnotation] != "2" || cfg.Annotations[GracePeriodAnnotation] != "12" {
		t.Errorf("annotations %v", cfg.Annotations)
	}
	if cfg.Labels[ContainerNameLabel] != "app" || cfg.Labels[PodUIDLabel] != "uid-p" {
		t.Errorf("labels %v", cfg.Labels)
	}
	// Without them containerd puts the container in the sandbox's PID
	// namespace, where its process is not PID 1.
	if ns := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions(); ns.GetPid() != runtimeapi.NamespaceMode_CONTAINER ||
		ns.GetNetwork() != runtimeapi.NamespaceMode_POD || ns.GetIpc() != runtimeapi.NamespaceMode_POD {
		t.Errorf("namespace options %v, want the pod's: PID per container, network and IPC per pod", ns)
	}
	if cfg := containerConfig(pod, c, 0, false); cfg.LogPath != "" {
		t.Errorf("log path %q without logs", cfg.LogPath)
	}
}

func TestContainerResources(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name                string
		res                 v1.ResourceRequirements
		shares, quota, peri int64
		mem                 int64
	}{
		{"none", v1.ResourceRequirements{}, 2, 0, 0, 0},
		{"cpu request", v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: q("500m")}}, 512, 0, 0, 0},
		{"tiny cpu request", v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: q("1m")}}, 2, 0, 0, 0},
		{"cpu limit", v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: q("2")}}, 2, 200000, 100000, 0},
		{"tiny cpu limit", v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: q("1m")}}, 2, 1000, 100000, 0},
		{"memory limit", v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: q("64Mi")}}, 2, 0, 0, 64 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := containerResources(&v1.Container{Resources: tc.res})
			if r.CpuShares != tc.shares || r.CpuQuota != tc.quota || r.CpuPeriod != tc.peri || r.MemoryLimitInBytes != tc.mem {
				t.Errorf("resources %v", r)
			}
		})
	}
}
