package config_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

func TestDefaultConfigValidates(t *testing.T) {
	cfg := config.Default()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	if cfg.Kind != config.Kind || cfg.APIVersion != config.APIVersion {
		t.Errorf("DefaultConfig's type: %s %s", cfg.Kind, cfg.APIVersion)
	}
}

// Validate names the field of every bad value, all at once.
func TestValidateNamesBadFields(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*config.Config)
		want []string // in the error, all of them
	}{
		{"negative interval", func(c *config.Config) { c.HousekeepingInterval.Duration = -time.Second }, []string{"housekeepingInterval", "-1s"}},
		{"zero interval", func(c *config.Config) { c.RuntimePollInterval.Duration = 0 }, []string{"runtimePollInterval"}},
		{"no runtime calls", func(c *config.Config) { c.MaxConcurrentRuntimeCalls = 0 }, []string{"maxConcurrentRuntimeCalls", "got 0"}},
		{"no kubelet API connections", func(c *config.Config) { c.MaxOpenConnections = 0 }, []string{"maxOpenConnections", "got 0"}},
		{"no parallel pulls", func(c *config.Config) { c.MaxParallelImagePulls = ptr.To[int32](0) }, []string{"maxParallelImagePulls 0 must be a positive number"}},
		{"parallel pulls serialized", func(c *config.Config) {
			c.SerializeImagePulls, c.MaxParallelImagePulls = ptr.To(true), ptr.To[int32](3)
		}, []string{"maxParallelImagePulls cannot be larger than 1 unless serializeImagePulls"}},
		{"no pull deadline", func(c *config.Config) { c.ImagePullProgressDeadline.Duration = 0 }, []string{"imagePullProgressDeadline must be positive"}},
		{"unknown allocatable resource", func(c *config.Config) { c.Allocatable = agenttest.Resources("nvidia.com/gpu=1") }, []string{"allocatable", `"nvidia.com/gpu"`}},
		{"zero allocatable", func(c *config.Config) { c.Allocatable = agenttest.Resources("memory=0") }, []string{"allocatable memory"}},
		{"bad logFormat", func(c *config.Config) { c.LogFormat = "xml" }, []string{"logFormat", `"xml"`}},
		{"bad containerLogMaxSize", func(c *config.Config) { c.ContainerLogMaxSize = "ten" }, []string{"containerLogMaxSize", `"ten"`}},
		{"zero containerLogMaxSize", func(c *config.Config) { c.ContainerLogMaxSize = "0" }, []string{"containerLogMaxSize", `"0"`}},
		{"negative minimumContainerTTLDuration", func(c *config.Config) { c.MinimumContainerTTLDuration.Duration = -time.Second }, []string{"minimumContainerTTLDuration", "got -1s"}},
		{"one containerLogMaxFiles", func(c *config.Config) { c.ContainerLogMaxFiles = 1 }, []string{"containerLogMaxFiles", "got 1"}},
		{"zero containerLogMonitorInterval", func(c *config.Config) { c.ContainerLogMonitorInterval.Duration = 0 }, []string{"containerLogMonitorInterval"}},
		{"both shutdown forms", func(c *config.Config) {
			c.ShutdownGracePeriod.Duration = 30 * time.Second
			c.ShutdownGracePeriodByPodPriority = []config.ShutdownGracePeriodByPodPriority{{Priority: 0, ShutdownGracePeriodSeconds: 10}}
		}, []string{"shutdownGracePeriodByPodPriority", "shutdownGracePeriod/"}},
		{"critical longer than total", func(c *config.Config) {
			c.ShutdownGracePeriod.Duration = 10 * time.Second
			c.ShutdownGracePeriodCriticalPods.Duration = 20 * time.Second
		}, []string{"shutdownGracePeriodCriticalPods"}},
		{"negative band", func(c *config.Config) {
			c.ShutdownGracePeriodByPodPriority = []config.ShutdownGracePeriodByPodPriority{{Priority: 5, ShutdownGracePeriodSeconds: -1}}
		}, []string{"shutdownGracePeriodByPodPriority", "priority 5"}},
		{"no node name", func(c *config.Config) { c.NodeName = "" }, []string{"nodeName"}},
		{"address a host name", func(c *config.Config) { c.Address = "localhost" }, []string{"address must be an IP address", `"localhost"`}},
		{"deprecated host:port address and a read-only port", func(c *config.Config) { c.Address, c.ReadOnlyPort = "127.0.0.1:10255", 10256 },
			[]string{`address "127.0.0.1:10255" is the deprecated host:port`, "readOnlyPort 10256"}},
		{"address and bindAddress disagree", func(c *config.Config) { c.Address, c.BindAddress = "10.0.0.1", "10.0.0.2" }, []string{"disagree"}},
		{"read-only port too large", func(c *config.Config) { c.ReadOnlyPort = 70000 }, []string{"readOnlyPort must be 0 (off) to 65535", "70000"}},
		{"no root directory", func(c *config.Config) { c.RootDir = "" }, []string{"rootDir"}},
		{"bootstrap without kubeconfig", func(c *config.Config) { c.BootstrapKubeconfig = "/etc/podlife/bootstrap.kubeconfig" }, []string{"bootstrapKubeconfig", "need kubeconfig"}},
		{"serving certificates without kubeconfig", func(c *config.Config) { c.RotateServerCertificates = true }, []string{"rotateServerCertificates", "need kubeconfig"}},
		{"port too large", func(c *config.Config) { c.Port = 70000 }, []string{"port must be 0 (off) to 65535", "70000"}},
		{"healthz port too large", func(c *config.Config) { c.HealthzPort = 70000 }, []string{"healthzPort must be 0 (off) to 65535", "70000"}},
		{"healthz bind address not an IP", func(c *config.Config) { c.HealthzBindAddress = "localhost" }, []string{"healthzBindAddress", `"localhost"`}},
		{"bind address not an IP", func(c *config.Config) { c.BindAddress = "localhost" }, []string{"bindAddress", `"localhost"`}},
		{"unknown authorization mode", func(c *config.Config) { c.AuthorizationMode = "RBAC" }, []string{"authorizationMode", `"RBAC"`}},
		{"certificate without key", func(c *config.Config) { c.TLSCertFile = "serving.crt" }, []string{"tlsCertFile and tlsPrivateKeyFile"}},
		{"unsafe sysctl not namespaced", func(c *config.Config) { c.AllowedUnsafeSysctls = []string{"kernel.msg*", "vm.swappiness"} },
			[]string{"allowedUnsafeSysctls", `"vm.swappiness" are not known to be namespaced`}},
		{"malformed sysctl pattern", func(c *config.Config) { c.AllowedUnsafeSysctls = []string{"net.*.x"} }, []string{"allowedUnsafeSysctls", `"net.*.x"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
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
		cfg := config.Default()
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

func TestLoadConfigFile(t *testing.T) {
	t.Run("valid", func(t *testing.T) {
		cfg := config.Default()
		if err := config.LoadFile(filepath.Join("testdata", "config", "valid.yaml"), &cfg); err != nil {
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
		if def := config.Default(); cfg.FileCheckFrequency != def.FileCheckFrequency || cfg.Address != def.Address {
			t.Errorf("defaults lost: %+v", cfg)
		}
	})
	for _, c := range []struct {
		file string
		want []string
	}{
		{"unknown-field.yaml", []string{"housekeepingIntervall"}},
		{"wrong-kind.yaml", []string{`"KubeletConfiguration"`, config.Kind}},
		{"no-kind.yaml", []string{config.Kind}},
		{"not-yaml.yaml", nil},
		{"missing.yaml", []string{"no such file"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", "config", c.file)
			cfg := config.Default()
			err := config.LoadFile(path, &cfg)
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
			cfg := config.Default()
			cfg.SerializeImagePulls, cfg.MaxParallelImagePulls = c.serialize, c.parallel
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := cfg.ParallelPulls(); got != c.want {
				t.Errorf("parallel pulls %d, want %d", got, c.want)
			}
		})
	}
}
