package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/agent/config"
)

// TestResolveConfig checks the precedence defaults < file < flags set on
// the command line, and that bad values are errors.
func TestResolveConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agent.yaml")
	err := os.WriteFile(file, []byte(`apiVersion: podlife.io/v1alpha1
kind: AgentConfiguration
nodeName: from-file
staticPodPath: /from/file
housekeepingInterval: 5s
allocatable: {cpu: "3"}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	kubeletFile := filepath.Join(t.TempDir(), "config.yaml")
	err = os.WriteFile(kubeletFile, []byte(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /etc/kubernetes/manifests
rotateCertificates: true
authentication: {webhook: {enabled: true}, x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}}
healthzPort: 10248
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	refusedFile := filepath.Join(t.TempDir(), "refused.yaml")
	if err := os.WriteFile(refusedFile, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readOnlyFile := filepath.Join(t.TempDir(), "readonly.yaml")
	if err := os.WriteFile(readOnlyFile, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\naddress: 0.0.0.0\nreadOnlyPort: 10255\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, node, path string, hk time.Duration, cpu string)
		// checkConfig checks the whole configuration.
		checkConfig func(t *testing.T, cfg config.Config)
		wantErr     string
	}{
		{name: "file over defaults", args: []string{"--config", file}, check: func(t *testing.T, node, path string, hk time.Duration, cpu string) {
			if node != "from-file" || path != "/from/file" || hk != 5*time.Second || cpu != "3" {
				t.Errorf("got %s %s %s cpu=%s", node, path, hk, cpu)
			}
		}},
		{name: "flags over file", args: []string{"--config", file, "--node-name", "from-flag", "--housekeeping-interval", "1s", "--allocatable", "cpu=500m,memory=1Gi"}, check: func(t *testing.T, node, path string, hk time.Duration, cpu string) {
			if node != "from-flag" || path != "/from/file" || hk != time.Second || cpu != "500m" {
				t.Errorf("got %s %s %s cpu=%s", node, path, hk, cpu)
			}
		}},
		{name: "log rotation flags", args: []string{"--config", file, "--container-log-max-size", "1Ki", "--container-log-max-files", "3"}, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.ContainerLogMaxSize != "1Ki" || cfg.ContainerLogMaxFiles != 3 {
				t.Errorf("got containerLogMaxSize %q containerLogMaxFiles %d", cfg.ContainerLogMaxSize, cfg.ContainerLogMaxFiles)
			}
		}},
		{name: "healthz defaults", args: nil, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.HealthzPort != 10248 || cfg.HealthzBindAddress != "127.0.0.1" {
				t.Errorf("got healthz %s:%d; want the kubelet's 127.0.0.1:10248", cfg.HealthzBindAddress, cfg.HealthzPort)
			}
		}},
		{name: "healthz flags", args: []string{"--healthz-port", "0", "--healthz-bind-address", "0.0.0.0"}, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.HealthzPort != 0 || cfg.HealthzBindAddress != "0.0.0.0" {
				t.Errorf("got healthz %s:%d", cfg.HealthzBindAddress, cfg.HealthzPort)
			}
		}},
		{name: "garbage collection defaults", args: nil, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.MinimumContainerTTLDuration.Duration != 0 || cfg.MaximumDeadContainersPerContainer != 1 || cfg.MaximumDeadContainers != -1 {
				t.Errorf("got %s %d %d; want the kubelet's 0 1 -1", cfg.MinimumContainerTTLDuration.Duration, cfg.MaximumDeadContainersPerContainer, cfg.MaximumDeadContainers)
			}
		}},
		{name: "garbage collection flags", args: []string{"--minimum-container-ttl-duration", "2m", "--maximum-dead-containers-per-container", "3", "--maximum-dead-containers", "100"}, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.MinimumContainerTTLDuration.Duration != 2*time.Minute || cfg.MaximumDeadContainersPerContainer != 3 || cfg.MaximumDeadContainers != 100 {
				t.Errorf("got %s %d %d", cfg.MinimumContainerTTLDuration.Duration, cfg.MaximumDeadContainersPerContainer, cfg.MaximumDeadContainers)
			}
		}},
		{name: "negative container TTL", args: []string{"--minimum-container-ttl-duration", "-1s"}, wantErr: "minimumContainerTTLDuration must not be negative"},
		{name: "TLS bootstrap flags", args: []string{"--kubeconfig", "/k", "--bootstrap-kubeconfig", "/b", "--cert-dir", "/c", "--rotate-server-certificates"}, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.Kubeconfig != "/k" || cfg.BootstrapKubeconfig != "/b" || cfg.CertDir != "/c" || !cfg.RotateServerCertificates {
				t.Errorf("got kubeconfig %q bootstrapKubeconfig %q certDir %q rotateServerCertificates %v", cfg.Kubeconfig, cfg.BootstrapKubeconfig, cfg.CertDir, cfg.RotateServerCertificates)
			}
		}},
		{name: "bootstrap without kubeconfig", args: []string{"--bootstrap-kubeconfig", "/b"}, wantErr: "bootstrapKubeconfig and rotateServerCertificates need kubeconfig"},
		{name: "security flags", args: []string{"--seccomp-default", "--allowed-unsafe-sysctls", "kernel.msg*,net.core.somaxconn"}, checkConfig: func(t *testing.T, cfg config.Config) {
			if !cfg.SeccompDefault || strings.Join(cfg.AllowedUnsafeSysctls, " ") != "kernel.msg* net.core.somaxconn" {
				t.Errorf("got seccompDefault %v allowedUnsafeSysctls %q", cfg.SeccompDefault, cfg.AllowedUnsafeSysctls)
			}
		}},
		{name: "pull flags", args: []string{"--serialize-image-pulls=false", "--image-pull-progress-deadline", "90s"}, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.SerializeImagePulls == nil || *cfg.SerializeImagePulls || cfg.ImagePullProgressDeadline.Duration != 90*time.Second {
				t.Errorf("got serializeImagePulls %v imagePullProgressDeadline %s", cfg.SerializeImagePulls, cfg.ImagePullProgressDeadline.Duration)
			}
		}},
		{name: "serialized pulls by flag alone", args: []string{"--serialize-image-pulls"}, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.SerializeImagePulls == nil || !*cfg.SerializeImagePulls {
				t.Errorf("got serializeImagePulls %v", cfg.SerializeImagePulls)
			}
		}},
		{name: "pull defaults", checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.SerializeImagePulls != nil || cfg.ImagePullProgressDeadline.Duration != 5*time.Minute {
				t.Errorf("got serializeImagePulls %v imagePullProgressDeadline %s", cfg.SerializeImagePulls, cfg.ImagePullProgressDeadline.Duration)
			}
		}},
		{name: "bad pull deadline", args: []string{"--image-pull-progress-deadline", "0s"}, wantErr: "imagePullProgressDeadline must be positive"},
		{name: "sysctl not namespaced", args: []string{"--allowed-unsafe-sysctls", "vm.swappiness"}, wantErr: `"vm.swappiness" are not known to be namespaced`},
		{name: "bad log max files", args: []string{"--container-log-max-files", "1"}, wantErr: "containerLogMaxFiles must be at least 2"},
		{name: "invalid value", args: []string{"--housekeeping-interval", "-1s"}, wantErr: "housekeepingInterval must be positive"},
		{name: "bad allocatable flag", args: []string{"--allocatable", "cpu"}, wantErr: "not name=quantity"},
		{name: "unknown resource", args: []string{"--allocatable", "gpu=1"}, wantErr: `unknown resource "gpu"`},
		{name: "a kubelet's file with the flags kubeadm passes", args: []string{"--config", kubeletFile, "--kubeconfig", "/etc/kubernetes/kubelet.conf", "--bootstrap-kubeconfig", "/etc/kubernetes/bootstrap-kubelet.conf"},
			checkConfig: func(t *testing.T, cfg config.Config) {
				if cfg.StaticPodPath != "/etc/kubernetes/manifests" || cfg.ClientCAFile != "/etc/kubernetes/pki/ca.crt" || cfg.Kubeconfig != "/etc/kubernetes/kubelet.conf" {
					t.Errorf("got staticPodPath %q clientCAFile %q kubeconfig %q", cfg.StaticPodPath, cfg.ClientCAFile, cfg.Kubeconfig)
				}
			}},
		{name: "a kubelet's file whose flags podlife cannot square", args: []string{"--config", kubeletFile}, wantErr: "rotateCertificates: podlife rotates a client certificate it bootstrapped"},
		{name: "a kubelet's field podlife does not honour", args: []string{"--config", refusedFile}, wantErr: "cgroupDriver: not honoured"},
		{name: "the kubelet's node flags", args: []string{"--hostname-override", "worker-1", "--container-runtime-endpoint", "unix:///run/containerd/containerd.sock",
			"--node-labels", "podlife.dev/pool=blue,team=a", "--node-ip", "10.0.0.7", "--register-with-taints", "dedicated=ci:NoSchedule"},
			checkConfig: func(t *testing.T, cfg config.Config) {
				if cfg.NodeName != "worker-1" || cfg.RuntimeEndpoint != "unix:///run/containerd/containerd.sock" || cfg.NodeLabels["podlife.dev/pool"] != "blue" ||
					cfg.NodeLabels["team"] != "a" || strings.Join(cfg.NodeIPs, ",") != "10.0.0.7" || len(cfg.RegisterWithTaints) != 1 || cfg.RegisterWithTaints[0].Key != "dedicated" {
					t.Errorf("got name %q endpoint %q labels %v ips %v taints %v", cfg.NodeName, cfg.RuntimeEndpoint, cfg.NodeLabels, cfg.NodeIPs, cfg.RegisterWithTaints)
				}
			}},
		{name: "a bad node IP", args: []string{"--node-ip", "10.0.0"}, wantErr: `nodeIPs: "10.0.0" is not an IP address`},
		{name: "a bad taint", args: []string{"--register-with-taints", "dedicated=ci"}, wantErr: "want key[=value]:Effect"},
		{name: "the kubelet's address and read-only port", args: []string{"--address", "10.0.0.7", "--read-only-port", "10255"}, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.ServingIP() != "10.0.0.7" || cfg.ReadOnlyAddress() != "10.0.0.7:10255" || len(cfg.Deprecations()) != 0 {
				t.Errorf("got serving IP %q read-only %q deprecations %q", cfg.ServingIP(), cfg.ReadOnlyAddress(), cfg.Deprecations())
			}
		}},
		{name: "read-only port on every interface by default", args: []string{"--read-only-port", "10255"}, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.ReadOnlyAddress() != "0.0.0.0:10255" {
				t.Errorf("got read-only %q", cfg.ReadOnlyAddress())
			}
		}},
		{name: "the deprecated host:port address", args: []string{"--address", "127.0.0.1:10255"}, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.ServingIP() != "0.0.0.0" || cfg.ReadOnlyAddress() != "127.0.0.1:10255" || len(cfg.Deprecations()) != 1 {
				t.Errorf("got serving IP %q read-only %q deprecations %q", cfg.ServingIP(), cfg.ReadOnlyAddress(), cfg.Deprecations())
			}
		}},
		{name: "the deprecated bind address", args: []string{"--bind-address", "127.0.0.1"}, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.ServingIP() != "127.0.0.1" || cfg.ReadOnlyAddress() != "" || len(cfg.Deprecations()) != 1 {
				t.Errorf("got serving IP %q read-only %q deprecations %q", cfg.ServingIP(), cfg.ReadOnlyAddress(), cfg.Deprecations())
			}
		}},
		{name: "a host name as address", args: []string{"--address", "node1"}, wantErr: `address must be an IP address`},
		{name: "a kubelet's file with address and readOnlyPort", args: []string{"--config", readOnlyFile}, checkConfig: func(t *testing.T, cfg config.Config) {
			if cfg.ServingIP() != "0.0.0.0" || cfg.ReadOnlyAddress() != "0.0.0.0:10255" {
				t.Errorf("got serving IP %q read-only %q", cfg.ServingIP(), cfg.ReadOnlyAddress())
			}
		}},
		{name: "missing file", args: []string{"--config", filepath.Join(t.TempDir(), "nope.yaml")}, wantErr: "nope.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := runCommand()
			err := cmd.ParseFlags(tc.args)
			if err == nil {
				configFile, _ := cmd.Flags().GetString("config")
				cfg, rerr := resolveConfig(cmd.Flags(), configFile)
				err = rerr
				if err == nil && tc.check != nil {
					cpu := cfg.Allocatable[v1.ResourceCPU]
					tc.check(t, cfg.NodeName, cfg.StaticPodPath, cfg.HousekeepingInterval.Duration, cpu.String())
				}
				if err == nil && tc.checkConfig != nil {
					tc.checkConfig(t, cfg)
				}
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
