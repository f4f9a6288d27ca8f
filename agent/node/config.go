package node

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// Config configures a Manager.
type Config struct {
	Client   kubernetes.Interface // the node's identity (system:node:<NodeName>)
	NodeName string
	Clock    clock.WithTicker // nil: the real clock
	Logger   *slog.Logger     // nil: no logs

	Capacity    v1.ResourceList // cpu, memory and pods; a missing one keeps the node not ready, as in the kubelet
	Allocatable v1.ResourceList // nil: Capacity
	// DeviceResources, if set, is asked at each status update for the
	// device plugins' resources, set over Capacity and Allocatable (the
	// kubelet's GetDevicePluginResourceCapacity): a resource it stops
	// naming keeps the value last written.
	DeviceResources func() (capacity, allocatable v1.ResourceList)
	// Addresses are the node's addresses; nil: the InternalIP of the host
	// (the default route's interface, else the first non-loopback address)
	// and the Hostname NodeName.
	Addresses      []v1.NodeAddress
	RuntimeVersion string // NodeSystemInfo.ContainerRuntimeVersion, e.g. "containerd://2.1.4"
	AgentVersion   string // NodeSystemInfo.KubeletVersion, e.g. "v1.37.2-podlife"
	// Labels are added to kubernetes.io/hostname, kubernetes.io/os and
	// kubernetes.io/arch. NodeRestriction lets a node set only some labels
	// under kubernetes.io and k8s.io; New refuses the others.
	Labels map[string]string
	// Taints are set on the Node when this Manager creates it (the
	// kubelet's --register-with-taints); a Node adopted keeps its own, as
	// the kubelet leaves them to the cluster after registration.
	Taints []v1.Taint
	// KubeletPort is the port of the agent's kubelet API, advertised as
	// Status.DaemonEndpoints.KubeletEndpoint.Port: the API server dials
	// the node's InternalIP there for logs, exec, attach and port-forward.
	// 0: none served.
	KubeletPort int32
	// RuntimeHandlers are the runtime's handlers and their features, as
	// Status.RuntimeHandlers (the upstream e2e suite reads from it whether
	// the runtime supports recursive read-only mounts).
	RuntimeHandlers []v1.NodeRuntimeHandler

	// Ready is asked at each status update: false makes the Ready condition
	// False with the reason and message given (e.g. the runtime is down).
	// nil: always ready.
	Ready func() (ok bool, reason, message string)

	StatusUpdateFrequency time.Duration // 0: 10s: how often the status is computed and, if changed, written
	StatusReportFrequency time.Duration // 0: 5m: how often it is written even if unchanged
	LeaseDuration         time.Duration // 0: 40s; whole seconds
	RenewInterval         time.Duration // 0: 10s
}

// The kubelet's defaults (nodeStatusUpdateFrequency,
// nodeStatusReportFrequency, nodeLeaseDurationSeconds, and the renew
// interval it derives from the lease duration).
const (
	defaultStatusUpdateFrequency = 10 * time.Second
	defaultStatusReportFrequency = 5 * time.Minute
	defaultLeaseDuration         = 40 * time.Second
	defaultRenewInterval         = 10 * time.Second
)

// withDefaults validates cfg and fills in what it leaves to defaults.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Client == nil {
		return cfg, errors.New("node: Config.Client is required")
	}
	if errs := validation.IsDNS1123Subdomain(cfg.NodeName); len(errs) > 0 {
		return cfg, fmt.Errorf("node: invalid node name %q: %s", cfg.NodeName, strings.Join(errs, "; "))
	}
	if forbidden := forbiddenLabels(cfg.Labels); len(forbidden) > 0 {
		return cfg, fmt.Errorf("node %s: NodeRestriction forbids a node to set the labels %s", cfg.NodeName, strings.Join(forbidden, ", "))
	}
	for _, t := range cfg.Taints {
		if err := ValidateTaint(t); err != nil {
			return cfg, fmt.Errorf("node %s: %w", cfg.NodeName, err)
		}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Allocatable == nil {
		cfg.Allocatable = cfg.Capacity
	}
	if cfg.Ready == nil {
		cfg.Ready = func() (bool, string, string) { return true, "", "" }
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&cfg.StatusUpdateFrequency, defaultStatusUpdateFrequency},
		{&cfg.StatusReportFrequency, defaultStatusReportFrequency},
		{&cfg.LeaseDuration, defaultLeaseDuration},
		{&cfg.RenewInterval, defaultRenewInterval},
	} {
		if *d.v < 0 {
			return cfg, fmt.Errorf("node %s: negative duration %v", cfg.NodeName, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.LeaseDuration < time.Second || cfg.LeaseDuration%time.Second != 0 {
		return cfg, fmt.Errorf("node %s: the lease duration %v is not a whole number of seconds", cfg.NodeName, cfg.LeaseDuration)
	}
	return cfg, nil
}
