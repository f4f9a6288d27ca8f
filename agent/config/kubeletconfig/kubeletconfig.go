// Package kubeletconfig is the correspondence between podlife's
// AgentConfiguration (agent/config) and the kubelet's KubeletConfiguration
// (kubelet.config.k8s.io/v1beta1; in the kubelet, pkg/kubelet/apis/config).
// It is one place, so that what /configz reports and what a
// KubeletConfiguration file read by --config sets cannot drift apart.
package kubeletconfig

import (
	"net"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/podlife/podlife/agent/config"
)

// The kubelet's names of its configuration's kind.
const (
	Kind       = "KubeletConfiguration"
	APIVersion = "kubelet.config.k8s.io/v1beta1"
)

// FromAgent is c as a KubeletConfiguration: the fields podlife honours,
// with the kubelet's names and meanings. Every other field (cgroups,
// eviction, image GC, reserved resources, feature gates ...) stays at its zero value, because podlife does not do what it
// configures; a zero says "not set", not the kubelet's default.
func FromAgent(c *config.Config) *kubeletconfigv1beta1.KubeletConfiguration {
	k := &kubeletconfigv1beta1.KubeletConfiguration{
		TypeMeta:           metav1.TypeMeta{Kind: Kind, APIVersion: APIVersion},
		EnableServer:       ptr.To(c.Port != 0),
		StaticPodPath:      c.StaticPodPath,
		SyncFrequency:      c.SyncFrequency,
		FileCheckFrequency: c.FileCheckFrequency,
		Address:            c.ServingIP(),
		Port:               int32(c.Port),
		ReadOnlyPort:       readOnlyPort(c.ReadOnlyAddress()),
		HealthzPort:        ptr.To(int32(c.HealthzPort)),
		HealthzBindAddress: c.HealthzBindAddress,
		TLSCertFile:        c.TLSCertFile,
		TLSPrivateKeyFile:  c.TLSPrivateKeyFile,
		// The client certificate is rotated when it was bootstrapped.
		RotateCertificates: c.BootstrapKubeconfig != "",
		ServerTLSBootstrap: c.RotateServerCertificates,
		Authentication: kubeletconfigv1beta1.KubeletAuthentication{
			X509: kubeletconfigv1beta1.KubeletX509Authentication{ClientCAFile: c.ClientCAFile},
			// Bearer tokens go to the API server's TokenReview: in a
			// cluster only.
			Webhook:   kubeletconfigv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(c.Kubeconfig != "")},
			Anonymous: kubeletconfigv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(c.AnonymousAuth)},
		},
		Authorization: kubeletconfigv1beta1.KubeletAuthorization{
			Mode: kubeletconfigv1beta1.KubeletAuthorizationMode(c.AuthorizationMode),
		},
		SerializeImagePulls:   ptr.To(c.ParallelPulls() == 1),
		MaxParallelImagePulls: c.MaxParallelImagePulls,

		PodLogsDir:                  c.ResolvedPodLogsDir(),
		ContainerLogMaxSize:         c.ContainerLogMaxSize,
		ContainerLogMaxFiles:        ptr.To(int32(c.ContainerLogMaxFiles)),
		ContainerLogMonitorInterval: ptr.To(c.ContainerLogMonitorInterval),

		AllowedUnsafeSysctls: c.AllowedUnsafeSysctls,
		SeccompDefault:       ptr.To(c.SeccompDefault),
		Logging: logsapi.LoggingConfiguration{
			Format:    c.LogFormat,
			Verbosity: logsapi.VerbosityLevel(c.Verbosity),
		},

		ShutdownGracePeriod:             c.ShutdownGracePeriod,
		ShutdownGracePeriodCriticalPods: c.ShutdownGracePeriodCriticalPods,

		// A node joins (and registers its Node) in a cluster only.
		RegisterNode:             ptr.To(c.Kubeconfig != ""),
		ContainerRuntimeEndpoint: c.RuntimeEndpoint,
		RegisterWithTaints:       c.RegisterWithTaints,
		ClusterDNS:               c.ClusterDNS,
		MaxPods:                  int32(c.MaxPods),
		ClusterDomain:            c.ClusterDomain,
	}
	for _, b := range c.ShutdownGracePeriodByPodPriority {
		k.ShutdownGracePeriodByPodPriority = append(k.ShutdownGracePeriodByPodPriority, kubeletconfigv1beta1.ShutdownGracePeriodByPodPriority{
			Priority: b.Priority, ShutdownGracePeriodSeconds: b.ShutdownGracePeriodSeconds,
		})
	}
	return k
}

// readOnlyPort is the port of the read-only endpoint's host:port, 0 when
// it is off (its host is the serving IP but with the deprecated host:port
// address).
func readOnlyPort(address string) int32 {
	_, port, err := net.SplitHostPort(address)
	if err != nil {
		return 0
	}
	p, _ := strconv.ParseInt(port, 10, 32)
	return int32(p)
}
