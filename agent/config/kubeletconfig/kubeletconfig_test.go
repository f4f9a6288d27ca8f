package kubeletconfig

import (
	"fmt"
	"net"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/podlife/podlife/agent/config"
)

type kc = kubeletconfigv1beta1.KubeletConfiguration

var minute = metav1.Duration{Duration: time.Minute}

// agentRows each set an AgentConfiguration field (nil: the defaults) and
// read the KubeletConfiguration field it must land in.
var agentRows = []struct {
	name string
	edit func(*config.Config)
	get  func(*kc) any
	want any
}{
	{"kind", nil, func(k *kc) any { return k.Kind + " " + k.APIVersion }, "KubeletConfiguration kubelet.config.k8s.io/v1beta1"},
	{"staticPodPath", func(c *config.Config) { c.StaticPodPath = "/etc/kubernetes/manifests" }, func(k *kc) any { return k.StaticPodPath }, "/etc/kubernetes/manifests"},
	{"fileCheckFrequency", func(c *config.Config) { c.FileCheckFrequency = minute }, func(k *kc) any { return k.FileCheckFrequency }, minute},
	{"syncFrequency", func(c *config.Config) { c.SyncFrequency = minute }, func(k *kc) any { return k.SyncFrequency }, minute},
	{"address", func(c *config.Config) { c.Address = "10.0.0.7" }, func(k *kc) any { return k.Address }, "10.0.0.7"},
	{"address from the deprecated bindAddress", func(c *config.Config) { c.BindAddress = "10.0.0.8" }, func(k *kc) any { return k.Address }, "10.0.0.8"},
	{"address by default", nil, func(k *kc) any { return k.Address }, "0.0.0.0"},
	{"port", func(c *config.Config) { c.Port = 11250 }, func(k *kc) any { return k.Port }, int32(11250)},
	{"enableServer by default", nil, func(k *kc) any { return *k.EnableServer }, true},
	{"enableServer off with port 0", func(c *config.Config) { c.Port = 0 }, func(k *kc) any { return *k.EnableServer }, false},
	{"readOnlyPort off by default", nil, func(k *kc) any { return k.ReadOnlyPort }, int32(0)},
	{"readOnlyPort", func(c *config.Config) { c.ReadOnlyPort = 10255 }, func(k *kc) any { return k.ReadOnlyPort }, int32(10255)},
	{"readOnlyPort from the deprecated host:port address", func(c *config.Config) { c.Address = "127.0.0.1:10256" }, func(k *kc) any { return k.ReadOnlyPort }, int32(10256)},
	{"healthz by default", nil, func(k *kc) any { return net.JoinHostPort(k.HealthzBindAddress, fmt.Sprint(*k.HealthzPort)) }, "127.0.0.1:10248"},
	{"healthz off", func(c *config.Config) { c.HealthzPort = 0 }, func(k *kc) any { return *k.HealthzPort }, int32(0)},
	{"healthz address", func(c *config.Config) { c.HealthzBindAddress = "0.0.0.0" }, func(k *kc) any { return k.HealthzBindAddress }, "0.0.0.0"},
	{"tls files", func(c *config.Config) { c.TLSCertFile, c.TLSPrivateKeyFile = "c.crt", "c.key" },
		func(k *kc) any { return k.TLSCertFile + " " + k.TLSPrivateKeyFile }, "c.crt c.key"},
	{"rotateCertificates after a bootstrap", func(c *config.Config) { c.BootstrapKubeconfig = "b.conf" }, func(k *kc) any { return k.RotateCertificates }, true},
	{"serverTLSBootstrap", func(c *config.Config) { c.RotateServerCertificates = true }, func(k *kc) any { return k.ServerTLSBootstrap }, true},
	{"clientCAFile", func(c *config.Config) { c.ClientCAFile = "ca.crt" }, func(k *kc) any { return k.Authentication.X509.ClientCAFile }, "ca.crt"},
	{"anonymous", func(c *config.Config) { c.AnonymousAuth = true }, func(k *kc) any { return *k.Authentication.Anonymous.Enabled }, true},
	{"no token webhook standalone", nil, func(k *kc) any { return *k.Authentication.Webhook.Enabled }, false},
	{"token webhook in a cluster", func(c *config.Config) { c.Kubeconfig = "k.conf" }, func(k *kc) any { return *k.Authentication.Webhook.Enabled }, true},
	{"authorization mode", nil, func(k *kc) any { return k.Authorization.Mode }, kubeletconfigv1beta1.KubeletAuthorizationModeWebhook},
	{"authorization AlwaysAllow", func(c *config.Config) { c.AuthorizationMode = "AlwaysAllow" }, func(k *kc) any { return k.Authorization.Mode }, kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow},
	{"registerNode standalone", nil, func(k *kc) any { return *k.RegisterNode }, false},
	{"registerNode in a cluster", func(c *config.Config) { c.Kubeconfig = "k.conf" }, func(k *kc) any { return *k.RegisterNode }, true},
	{"containerRuntimeEndpoint", func(c *config.Config) { c.RuntimeEndpoint = "unix:///run/containerd/containerd.sock" },
		func(k *kc) any { return k.ContainerRuntimeEndpoint }, "unix:///run/containerd/containerd.sock"},
	{"serializeImagePulls by default", nil, func(k *kc) any { return *k.SerializeImagePulls }, true},
	{"parallel pulls", func(c *config.Config) { c.MaxParallelImagePulls = ptr.To[int32](3) },
		func(k *kc) any {
			return [2]int32{*k.MaxParallelImagePulls, map[bool]int32{true: 1}[*k.SerializeImagePulls]}
		}, [2]int32{3, 0}},
	{"containerLogMaxSize", func(c *config.Config) { c.ContainerLogMaxSize = "1Gi" }, func(k *kc) any { return k.ContainerLogMaxSize }, "1Gi"},
	{"containerLogMaxFiles", func(c *config.Config) { c.ContainerLogMaxFiles = 3 }, func(k *kc) any { return *k.ContainerLogMaxFiles }, int32(3)},
	{"containerLogMonitorInterval", func(c *config.Config) { c.ContainerLogMonitorInterval = minute }, func(k *kc) any { return *k.ContainerLogMonitorInterval }, minute},
	{"allowedUnsafeSysctls", func(c *config.Config) { c.AllowedUnsafeSysctls = []string{"kernel.msg*"} }, func(k *kc) any { return k.AllowedUnsafeSysctls }, []string{"kernel.msg*"}},
	{"seccompDefault", func(c *config.Config) { c.SeccompDefault = true }, func(k *kc) any { return *k.SeccompDefault }, true},
	{"logging", func(c *config.Config) { c.LogFormat, c.Verbosity = "json", 2 },
		func(k *kc) any { return k.Logging }, logsapi.LoggingConfiguration{Format: "json", Verbosity: 2}},
	{"shutdown grace periods", func(c *config.Config) {
		c.ShutdownGracePeriod, c.ShutdownGracePeriodCriticalPods = minute, metav1.Duration{Duration: time.Second}
	},
		func(k *kc) any {
			return [2]time.Duration{k.ShutdownGracePeriod.Duration, k.ShutdownGracePeriodCriticalPods.Duration}
		}, [2]time.Duration{time.Minute, time.Second}},
	{"shutdown by pod priority", func(c *config.Config) {
		c.ShutdownGracePeriodByPodPriority = []config.ShutdownGracePeriodByPodPriority{{Priority: 100, ShutdownGracePeriodSeconds: 30}}
	}, func(k *kc) any { return k.ShutdownGracePeriodByPodPriority },
		[]kubeletconfigv1beta1.ShutdownGracePeriodByPodPriority{{Priority: 100, ShutdownGracePeriodSeconds: 30}}},
	{"maxPods", func(c *config.Config) { c.MaxPods = 250 }, func(k *kc) any { return k.MaxPods }, int32(250)},
	{"registerWithTaints", func(c *config.Config) {
		c.RegisterWithTaints = []v1.Taint{{Key: "dedicated", Effect: v1.TaintEffectNoSchedule}}
	},
		func(k *kc) any { return k.RegisterWithTaints }, []v1.Taint{{Key: "dedicated", Effect: v1.TaintEffectNoSchedule}}},
	{"what podlife does not do stays unset", nil, func(k *kc) any {
		return []any{k.CgroupDriver, k.EvictionHard, k.ImageGCHighThresholdPercent, k.ClusterDNS, k.KubeReserved}
	}, []any{"", map[string]string(nil), (*int32)(nil), []string(nil), map[string]string(nil)}},
}

func TestFromAgent(t *testing.T) {
	for _, tt := range agentRows {
		c := config.Default()
		if tt.edit != nil {
			tt.edit(&c)
		}
		if got := tt.get(FromAgent(&c)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %#v, want %#v", tt.name, got, tt.want)
		}
	}
}
