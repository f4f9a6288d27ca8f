package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

func TestDefaultConfigValidates(t *testing.T) {
	cfg := agent.DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	if cfg.Kind != agent.ConfigKind || cfg.APIVersion != agent.ConfigAPIVersion {
		t.Errorf("DefaultConfig's type: %s %s", cfg.Kind, cfg.APIVersion)
	}
}

// Validate names the field of every bad value, all at once.
func TestValidateNamesBadFields(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*agent.Config)
		want []string // in the error, all of them
	}{
		{"negative interval", func(c *agent.Config) { c.HousekeepingInterval.Duration = -time.Second }, []string{"housekeepingInterval", "-1s"}},
		{"zero interval", func(c *agent.Config) { c.RuntimePollInterval.Duration = 0 }, []string{"runtimePollInterval"}},
		{"no runtime calls", func(c *agent.Config) { c.MaxConcurrentRuntimeCalls = 0 }, []string{"maxConcurrentRuntimeCalls", "got 0"}},
		{"no parallel pulls", func(c *agent.Config) { c.MaxParallelImagePulls = ptr.To[int32](0) }, []string{"maxParallelImagePulls 0 must be a positive number"}},
		{"parallel pulls serialized", func(c *agent.Config) {
			c.SerializeImagePulls, c.MaxParallelImagePulls = ptr.To(true), ptr.To[int32](3)
		}, []string{"maxParallelImagePulls cannot be larger than 1 unless serializeImagePulls"}},
		{"no pull deadline", func(c *agent.Config) { c.ImagePullProgressDeadline.Duration = 0 }, []string{"imagePullProgressDeadline must be positive"}},
		{"unknown allocatable resource", func(c *agent.Config) { c.Allocatable = agenttest.Resources("nvidia.com/gpu=1") }, []string{"allocatable", `"nvidia.com/gpu"`}},
		{"zero allocatable", func(c *agent.Config) { c.Allocatable = agenttest.Resources("memory=0") }, []string{"allocatable memory"}},
		{"bad logFormat", func(c *agent.Config) { c.LogFormat = "xml" }, []string{"logFormat", `"xml"`}},
		{"bad containerLogMaxSize", func(c *agent.Config) { c.ContainerLogMaxSize = "ten" }, []string{"containerLogMaxSize", `"ten"`}},
		{"zero containerLogMaxSize", func(c *agent.Config) { c.ContainerLogMaxSize = "0" }, []string{"containerLogMaxSize", `"0"`}},
		{"negative minimumContainerTTLDuration", func(c *agent.Config) { c.MinimumContainerTTLDuration.Duration = -time.Second }, []string{"minimumContainerTTLDuration", "got -1s"}},
		{"one containerLogMaxFiles", func(c *agent.Config) { c.ContainerLogMaxFiles = 1 }, []string{"containerLogMaxFiles", "got 1"}},
		{"zero containerLogMonitorInterval", func(c *agent.Config) { c.ContainerLogMonitorInterval.Duration = 0 }, []string{"containerLogMonitorInterval"}},
		{"both shutdown forms", func(c *agent.Config) {
			c.ShutdownGracePeriod.Duration = 30 * time.Second
			c.ShutdownGracePeriodByPodPriority = []agent.ShutdownGracePeriodByPodPriority{{Priority: 0, ShutdownGracePeriodSeconds: 10}}
		}, []string{"shutdownGracePeriodByPodPriority", "shutdownGracePeriod/"}},
		{"critical longer than total", func(c *agent.Config) {
			c.ShutdownGracePeriod.Duration = 10 * time.Second
			c.ShutdownGracePeriodCriticalPods.Duration = 20 * time.Second
		}, []string{"shutdownGracePeriodCriticalPods"}},
		{"negative band", func(c *agent.Config) {
			c.ShutdownGracePeriodByPodPriority = []agent.ShutdownGracePeriodByPodPriority{{Priority: 5, ShutdownGracePeriodSeconds: -1}}
		}, []string{"shutdownGracePeriodByPodPriority", "priority 5"}},
		{"no node name", func(c *agent.Config) { c.NodeName = "" }, []string{"nodeName"}},
		{"address without port", func(c *agent.Config) { c.Address = "127.0.0.1" }, []string{"address must be host:port", `"127.0.0.1"`}},
		{"no root directory", func(c *agent.Config) { c.RootDir = "" }, []string{"rootDir"}},
		{"bootstrap without kubeconfig", func(c *agent.Config) { c.BootstrapKubeconfig = "/etc/podlife/bootstrap.kubeconfig" }, []string{"bootstrapKubeconfig", "need kubeconfig"}},
		{"serving certificates without kubeconfig", func(c *agent.Config) { c.RotateServerCertificates = true }, []string{"rotateServerCertificates", "need kubeconfig"}},
		{"port too large", func(c *agent.Config) { c.Port = 70000 }, []string{"port must be 0 (off) to 65535", "70000"}},
		{"bind address not an IP", func(c *agent.Config) { c.BindAddress = "localhost" }, []string{"bindAddress", `"localhost"`}},
		{"unknown authorization mode", func(c *agent.Config) { c.AuthorizationMode = "RBAC" }, []string{"authorizationMode", `"RBAC"`}},
		{"certificate without key", func(c *agent.Config) { c.TLSCertFile = "serving.crt" }, []string{"tlsCertFile and tlsPrivateKeyFile"}},
		{"unsafe sysctl not namespaced", func(c *agent.Config) { c.AllowedUnsafeSysctls = []string{"kernel.msg*", "vm.swappiness"} },
			[]string{"allowedUnsafeSysctls", `"vm.swappiness" are not known to be namespaced`}},
		{"malformed sysctl pattern", func(c *agent.Config) { c.AllowedUnsafeSysctls = []string{"net.*.x"} }, []string{"allowedUnsafeSysctls", `"net.*.x"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := agent.DefaultConfig()
			c.edit(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}

	t.Run("every problem at once", func(t *testing.T) {
		cfg := agent.DefaultConfig()
		cfg.FileCheckFrequency.Duration = -1
		cfg.LogFormat = "xml"
		cfg.Allocatable = agenttest.Resources("gpu=1")
		err := cfg.Validate()
		if err == nil {
			t.Fatal("Validate accepted it")
		}
		for _, w := range []string{"fileCheckFrequency", "logFormat", "allocatable"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not mention %q", err, w)
			}
		}
	})
}

// New refuses an invalid configuration before it starts anything.
func TestNewRejectsInvalidConfig(t *testing.T) {
	cfg := agent.DefaultConfig()
	cfg.RootDir = t.TempDir()
	cfg.LogFormat = "xml"
	a, err := agent.New(context.Background(), cfg, agent.Options{})
	if err == nil || !strings.Contains(err.Error(), "logFormat") {
		t.Fatalf("New: %v, %v; want the logFormat error", a, err)
	}
}

// New refuses a root directory another user could tamper with, before it
// starts anything in it.
func TestNewRefusesUnsafeRootDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	cfg := agent.DefaultConfig()
	cfg.RootDir = dir
	cfg.Address = "127.0.0.1:0"
	a, err := agent.New(context.Background(), cfg, agent.Options{})
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "writable by group or others") {
		t.Fatalf("New: %v, %v; want the root directory's error", a, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("New left %d entries in the refused directory", len(entries))
	}
}

func TestLoadConfigFile(t *testing.T) {
	t.Run("valid", func(t *testing.T) {
		cfg := agent.DefaultConfig()
		if err := agent.LoadConfigFile(filepath.Join("testdata", "config", "valid.yaml"), &cfg); err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		if cfg.NodeName != "edge-1" || cfg.HousekeepingInterval.Duration != 5*time.Second || cfg.LogFormat != "json" ||
			cfg.ShutdownGracePeriod.Duration != 30*time.Second || cfg.ShutdownGracePeriodCriticalPods.Duration != 10*time.Second {
			t.Errorf("loaded: %+v", cfg)
		}
		if q := cfg.Allocatable["memory"]; q.String() != "4Gi" {
			t.Errorf("allocatable memory %s", q.String())
		}
		// What the file does not set keeps its default.
		if def := agent.DefaultConfig(); cfg.FileCheckFrequency != def.FileCheckFrequency || cfg.Address != def.Address {
			t.Errorf("defaults lost: %+v", cfg)
		}
	})
	for _, c := range []struct {
		file string
		want []string
	}{
		{"unknown-field.yaml", []string{"housekeepingIntervall"}},
		{"wrong-kind.yaml", []string{`"KubeletConfiguration"`, agent.ConfigKind}},
		{"no-kind.yaml", []string{agent.ConfigKind}},
		{"not-yaml.yaml", nil},
		{"missing.yaml", []string{"no such file"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", "config", c.file)
			cfg := agent.DefaultConfig()
			err := agent.LoadConfigFile(path, &cfg)
			if err == nil {
				t.Fatal("LoadConfigFile accepted it")
			}
			for _, w := range append([]string{path}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// A node that must bootstrap its client certificate with a bootstrap
// kubeconfig it cannot read stops with an error naming that file, after
// preparing the cert directory <root-dir>/pki 0700.
func TestNewNamesABadBootstrapKubeconfig(t *testing.T) {
	root := t.TempDir()
	bootstrap := filepath.Join(root, "missing-bootstrap.kubeconfig")
	cfg := agent.DefaultConfig()
	cfg.RootDir = root
	cfg.Address = "127.0.0.1:0"
	cfg.Kubeconfig = filepath.Join(root, "kubelet.kubeconfig")
	cfg.BootstrapKubeconfig = bootstrap
	a, err := agent.New(context.Background(), cfg, agent.Options{})
	if err == nil || !strings.Contains(err.Error(), "bootstrap kubeconfig "+bootstrap) {
		t.Fatalf("New: %v, %v; want an error naming the bootstrap kubeconfig", a, err)
	}
	if fi, err := os.Stat(filepath.Join(root, "pki")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("cert directory: %v, mode %v; want <root-dir>/pki 0700", err, fi.Mode())
	}
}

// Pulls are serialized unless maxParallelImagePulls is 2 or more, or
// serializeImagePulls is false, as the kubelet defaults them; the pull
// lane is then maxParallelImagePulls wide, or without limit.
func TestParallelPulls(t *testing.T) {
	for _, c := range []struct {
		name      string
		serialize *bool
		parallel  *int32
		want      int
	}{
		{"defaults", nil, nil, 1},
		{"parallel 1", nil, ptr.To[int32](1), 1},
		{"parallel 4", nil, ptr.To[int32](4), 4},
		{"not serialized", ptr.To(false), nil, 0},
		{"not serialized, parallel 1", ptr.To(false), ptr.To[int32](1), 1},
		{"serialized", ptr.To(true), ptr.To[int32](1), 1},
		{"not serialized, parallel 5", ptr.To(false), ptr.To[int32](5), 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := agent.DefaultConfig()
			cfg.SerializeImagePulls, cfg.MaxParallelImagePulls = c.serialize, c.parallel
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := agent.ParallelPulls(&cfg); got != c.want {
				t.Errorf("parallel pulls %d, want %d", got, c.want)
			}
		})
	}
}
