package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/podlife/podlife/agent/admission"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/kubeletserver"
	"github.com/podlife/podlife/agent/server"
	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/containergc"
)

// Kind and APIVersion identify an agent configuration file, in the style
// of the kubelet's KubeletConfiguration.
const (
	Kind       = "AgentConfiguration"
	APIVersion = "podlife.io/v1alpha1"
)

// Config is the agent's configuration: a file in the style of the
// kubelet's KubeletConfiguration, overridden by command-line flags.
type Config struct {
	metav1.TypeMeta `json:",inline"`

	// NodeName names this node; static pod names get "-<nodeName>". "":
	// the host name.
	NodeName string `json:"nodeName,omitempty"`
	// StaticPodPath is the directory of static pod manifests; "" runs no
	// static pods.
	StaticPodPath string `json:"staticPodPath,omitempty"`
	// FileCheckFrequency is how often the manifest directory is read
	// besides when inotify reports a change in it.
	FileCheckFrequency metav1.Duration `json:"fileCheckFrequency,omitzero"`
	// Kubeconfig is the kubeconfig of the node's identity in a cluster
	// (system:node:<nodeName>); "" runs the agent on its own, with static
	// pods only.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// BootstrapKubeconfig joins with a bootstrap token, as kubeadm join
	// does: while Kubeconfig is missing or its client certificate invalid,
	// the agent requests a node client certificate with this identity and
	// writes Kubeconfig; the certificate is then rotated before it expires
	// (agent/certificate). "": Kubeconfig is used as it is.
	BootstrapKubeconfig string `json:"bootstrapKubeconfig,omitempty"`
	// RotateServerCertificates requests the serving certificate from the
	// CSR API (signer kubernetes.io/kubelet-serving, approved by an admin).
	RotateServerCertificates bool `json:"rotateServerCertificates,omitempty"`
	// NodeLabels are set on the Node besides the kubelet's own
	// (kubernetes.io/hostname, os, arch), as the kubelet's --node-labels;
	// NodeRestriction's forbidden ones are refused at start.
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
	// NodeIPs are the node's InternalIP addresses, as the kubelet's
	// --node-ip (one per IP family); none: the host's own address.
	NodeIPs []string `json:"nodeIPs,omitempty"`
	// RegisterWithTaints are set on the Node when the agent creates it
	// (the kubelet's registerWithTaints).
	RegisterWithTaints []v1.Taint `json:"registerWithTaints,omitempty"`
	// ClusterDNS are the IPs of the cluster's DNS servers and ClusterDomain
	// its domain, which ClusterFirst pods resolve with (the kubelet's
	// clusterDNS and clusterDomain); none: the node's resolv.conf, with a
	// MissingClusterDNS warning on each such pod.
	ClusterDNS    []string `json:"clusterDNS,omitempty"`
	ClusterDomain string   `json:"clusterDomain,omitempty"`
	// RuntimeEndpoint is the CRI socket (unix:///run/containerd/containerd.sock);
	// "" runs the embedded runtime, in which containers do not really run.
	RuntimeEndpoint string `json:"runtimeEndpoint,omitempty"`
	// RootDir holds the control socket, the embedded runtime's socket and
	// the pod logs. It must be the agent's user's own: New creates it (mode
	// 0700) or refuses it (see prepareRootDir).
	RootDir string `json:"rootDir,omitempty"`
	// Address is the IP the kubelet API and the read-only port listen on,
	// the kubelet's address (--address): 0.0.0.0, every interface, by
	// default. Deprecated form, podlife's meaning before (kept for one
	// release, with a warning at start): host:port, the read-only
	// endpoint's own address (see serving.go).
	Address string `json:"address,omitempty"`
	// ReadOnlyPort is the kubelet's read-only port on Address (plain
	// HTTP, no authentication: /healthz, /pods without env values,
	// commands or args, /metrics, /metrics/probes, /metrics/resource,
	// /stats/summary, and podlife's /lifecycle); 0, the default, turns it
	// off, as the kubelet's: anyone who reaches it may read it. Control
	// and status are on the unix socket api.ControlSocket(RootDir).
	ReadOnlyPort int `json:"readOnlyPort,omitempty"`
	// Port is the kubelet API's port (HTTPS, authenticated; see
	// agent/kubeletserver); 0 turns it off. Standalone (no Kubeconfig) it
	// serves only with AuthorizationMode AlwaysAllow and ClientCAFile (or
	// AnonymousAuth), and stays off otherwise.
	Port int `json:"port,omitempty"`
	// BindAddress is Address's deprecated name (podlife's
	// --bind-address, when its --address was the read-only endpoint),
	// kept for one release: set, it is the IP, with a warning at start.
	BindAddress string `json:"bindAddress,omitempty"`
	// HealthzPort and HealthzBindAddress are the kubelet's healthz port
	// (plain HTTP, GET /healthz only), 10248 on 127.0.0.1 as the
	// kubelet's, which kubeadm polls; port 0 turns it off.
	HealthzPort        int    `json:"healthzPort"`
	HealthzBindAddress string `json:"healthzBindAddress,omitempty"`
	// TLSCertFile and TLSPrivateKeyFile are the kubelet API's serving
	// certificate; without them a self-signed one is made in CertDir.
	TLSCertFile       string `json:"tlsCertFile,omitempty"`
	TLSPrivateKeyFile string `json:"tlsPrivateKeyFile,omitempty"`
	// CertDir holds the agent's certificates and keys (0700): the client
	// certificate of a bootstrap, the serving certificates; "":
	// <rootDir>/pki.
	CertDir string `json:"certDir,omitempty"`
	// ClientCAFile signs the client certificates the kubelet API accepts.
	ClientCAFile string `json:"clientCAFile,omitempty"`
	// AnonymousAuth lets requests without credentials in as
	// system:anonymous (then authorized as any user).
	AnonymousAuth bool `json:"anonymousAuth,omitempty"`
	// AuthorizationMode is Webhook (SubjectAccessReview, cluster mode
	// only) or AlwaysAllow.
	AuthorizationMode string `json:"authorizationMode,omitempty"`
	// MaxOpenConnections caps the kubelet API's open connections (more
	// wait until one closes); a connection none of whose requests
	// authenticated is also closed after 10 s idle. The kubelet has no
	// such cap; the default is well above a node's legitimate clients.
	MaxOpenConnections int `json:"maxOpenConnections,omitempty"`
	// HousekeepingInterval is how often the agent reconciles the engine
	// with the manifests and the runtime.
	HousekeepingInterval metav1.Duration `json:"housekeepingInterval,omitzero"`
	// SyncFrequency is how often a running pod is resynced.
	SyncFrequency metav1.Duration `json:"syncFrequency,omitzero"`
	// RuntimePollInterval is how often the runtime status cache polls.
	RuntimePollInterval metav1.Duration `json:"runtimePollInterval,omitzero"`
	// MaxConcurrentRuntimeCalls bounds the CRI calls that change the
	// runtime (run, create, start, remove) in flight at once, and apart
	// from them the reads: thousands of pods created at once queue in the
	// agent, not in the runtime. Container and sandbox stops and preStop
	// hooks (no limit, as the kubelet's), probes and postStart hooks, and
	// pulls have lanes of their own (cri.Lanes).
	MaxConcurrentRuntimeCalls int `json:"maxConcurrentRuntimeCalls,omitempty"`
	// SerializeImagePulls pulls one image at a time, as the kubelet's
	// serializeImagePulls; unset, it is true unless MaxParallelImagePulls
	// is 2 or more (the kubelet's default). Pulls have a lane of their
	// own: no other call waits behind them (cri.Lanes).
	SerializeImagePulls *bool `json:"serializeImagePulls,omitempty"`
	// MaxParallelImagePulls bounds the pulls at once when they are not
	// serialized (the kubelet's maxParallelImagePulls); unset is no limit.
	MaxParallelImagePulls *int32 `json:"maxParallelImagePulls,omitempty"`
	// ImagePullProgressDeadline cancels a pull that has not completed
	// this long after it started (the kubelet's former
	// --image-pull-progress-deadline). The CRI reports no progress of a
	// pull, so this bounds the whole pull, not a pause in its progress:
	// set it above the time the largest image takes to pull.
	ImagePullProgressDeadline metav1.Duration `json:"imagePullProgressDeadline,omitzero"`
	// MaxPods is the node's pod capacity (the kubelet's maxPods): a pod
	// beyond it is rejected (OutOfpods), and the Node reports it.
	MaxPods int `json:"maxPods,omitempty"`
	// Allocatable is the CPU and memory pods may request; a missing entry
	// is the machine's own.
	Allocatable v1.ResourceList `json:"allocatable,omitempty"`
	// ShutdownGracePeriod is the total time node shutdown waits for pods.
	ShutdownGracePeriod metav1.Duration `json:"shutdownGracePeriod,omitzero"`
	// ShutdownGracePeriodCriticalPods is the last part of that time,
	// reserved for critical pods.
	ShutdownGracePeriodCriticalPods metav1.Duration `json:"shutdownGracePeriodCriticalPods,omitzero"`
	// ShutdownGracePeriodByPodPriority gives explicit priority bands; it
	// cannot be combined with the two fields above.
	ShutdownGracePeriodByPodPriority []ShutdownGracePeriodByPodPriority `json:"shutdownGracePeriodByPodPriority,omitempty"`
	// PodLogsDir is the pod log root, as the kubelet's podLogsDir: the
	// runtime writes container logs under it
	// (<namespace>_<name>_<uid>/<container>/<restart>.log) and the links
	// log shippers read are in its sibling "containers" (logs.LinkDir):
	// /var/log/pods and /var/log/containers, the kubelet's, by default
	// for root; "" puts it under RootDir (<rootDir>/pods, and
	// <rootDir>/containers), the default of other users, who may not write
	// /var/log.
	PodLogsDir string `json:"podLogsDir,omitempty"`
	// ContainerLogMaxSize is the size at which a container's log is
	// rotated, a quantity ("10Mi"), as the kubelet's containerLogMaxSize.
	ContainerLogMaxSize string `json:"containerLogMaxSize,omitempty"`
	// ContainerLogMaxFiles is how many files of a container's log are
	// kept, the current one included (at least 2).
	ContainerLogMaxFiles int `json:"containerLogMaxFiles,omitempty"`
	// ContainerLogMonitorInterval is how often the logs are checked for
	// rotation.
	ContainerLogMonitorInterval metav1.Duration `json:"containerLogMonitorInterval,omitzero"`
	// MinimumContainerTTLDuration, MaximumDeadContainersPerContainer and
	// MaximumDeadContainers are the container garbage collection policy
	// (containergc.Policy), as the kubelet's flags of the same names:
	// how long after its creation a dead container instance is kept in any
	// case, how many dead instances of each container of a pod are kept
	// (negative: no limit), and how many on the node (negative: no limit).
	// The newest instance of each container is always kept.
	MinimumContainerTTLDuration       metav1.Duration `json:"minimumContainerTTLDuration,omitzero"`
	MaximumDeadContainersPerContainer int             `json:"maximumDeadContainersPerContainer"`
	MaximumDeadContainers             int             `json:"maximumDeadContainers"`
	// SeccompDefault gives a container whose pod and container name no
	// seccomp profile the runtime's default (RuntimeDefault) instead of
	// Unconfined, as the kubelet's seccompDefault. Localhost profiles are
	// files under <rootDir>/seccomp, as under the kubelet's.
	SeccompDefault bool `json:"seccompDefault,omitempty"`
	// AllowedUnsafeSysctls are the sysctls, or patterns ending in "*"
	// ("kernel.msg*"), that pods may set besides the safe ones (the
	// kubelet's allowedUnsafeSysctls); each must be namespaced. A pod
	// setting another is rejected at admission (SysctlForbidden).
	AllowedUnsafeSysctls []string `json:"allowedUnsafeSysctls,omitempty"`
	// LogFormat is "text" or "json".
	LogFormat string `json:"logFormat,omitempty"`
	// Verbosity: 0 info, 1 and more debug.
	Verbosity int `json:"verbosity,omitempty"`
}

// ShutdownGracePeriodByPodPriority is one priority band of node shutdown.
type ShutdownGracePeriodByPodPriority struct {
	Priority                   int32 `json:"priority"`
	ShutdownGracePeriodSeconds int64 `json:"shutdownGracePeriodSeconds"`
}

// Default is the configuration with nothing set.
func Default() Config {
	host, _ := os.Hostname()
	return Config{
		TypeMeta:             metav1.TypeMeta{Kind: Kind, APIVersion: APIVersion},
		NodeName:             host,
		FileCheckFrequency:   metav1.Duration{Duration: time.Second},
		RootDir:              api.DefaultRootDir(),
		Port:                 kubeletserver.DefaultPort,
		Address:              DefaultAddress,
		HealthzPort:          server.DefaultHealthzPort,
		HealthzBindAddress:   server.DefaultHealthzBindAddress,
		AuthorizationMode:    kubeletserver.ModeWebhook,
		MaxOpenConnections:   kubeletserver.DefaultMaxOpenConnections,
		HousekeepingInterval: metav1.Duration{Duration: 2 * time.Second},
		SyncFrequency:        metav1.Duration{Duration: time.Minute},
		RuntimePollInterval:  metav1.Duration{Duration: time.Second},
		LogFormat:            "text",

		PodLogsDir:                  defaultPodLogsDir(os.Geteuid()),
		ContainerLogMaxSize:         "10Mi",
		ContainerLogMaxFiles:        5,
		ContainerLogMonitorInterval: metav1.Duration{Duration: 10 * time.Second},

		MaxConcurrentRuntimeCalls: 10,
		MaxPods:                   110,
		ImagePullProgressDeadline: metav1.Duration{Duration: defaultImagePullProgressDeadline},

		MaximumDeadContainersPerContainer: containergc.DefaultPolicy().MaxPerPodContainer,
		MaximumDeadContainers:             containergc.DefaultPolicy().MaxContainers,
	}
}

// LoadFile reads a configuration file over cfg.
func LoadFile(path string, cfg *Config) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	// The kind checked below must be the file's: cfg's own (Default
	// sets it) would let a file that names no kind pass.
	cfg.TypeMeta = metav1.TypeMeta{}
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if cfg.Kind != Kind || cfg.APIVersion != APIVersion {
		return fmt.Errorf("config file %s: kind %q apiVersion %q, want %s %s", path, cfg.Kind, cfg.APIVersion, Kind, APIVersion)
	}
	return nil
}

// Validate reports every problem of the configuration at once.
func (c *Config) Validate() error {
	var errs []error
	positive := map[string]metav1.Duration{
		"fileCheckFrequency":   c.FileCheckFrequency,
		"housekeepingInterval": c.HousekeepingInterval,
		"syncFrequency":        c.SyncFrequency,
		"runtimePollInterval":  c.RuntimePollInterval,

		"containerLogMonitorInterval": c.ContainerLogMonitorInterval,
	}
	for _, name := range []string{"fileCheckFrequency", "housekeepingInterval", "syncFrequency", "runtimePollInterval", "containerLogMonitorInterval"} {
		if positive[name].Duration <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", name, positive[name].Duration))
		}
	}
	if c.MinimumContainerTTLDuration.Duration < 0 {
		errs = append(errs, fmt.Errorf("minimumContainerTTLDuration must not be negative, got %s", c.MinimumContainerTTLDuration.Duration))
	}
	if c.MaxPods < 1 {
		errs = append(errs, fmt.Errorf("maxPods must be at least 1, got %d", c.MaxPods))
	}
	if c.MaxConcurrentRuntimeCalls < 1 {
		errs = append(errs, fmt.Errorf("maxConcurrentRuntimeCalls must be at least 1, got %d", c.MaxConcurrentRuntimeCalls))
	}
	errs = append(errs, c.validatePulls()...)
	if c.NodeName == "" {
		errs = append(errs, errors.New("nodeName is empty and the host name is unknown"))
	}
	for _, ip := range c.NodeIPs {
		if net.ParseIP(ip) == nil {
			errs = append(errs, fmt.Errorf("nodeIPs: %q is not an IP address", ip))
		}
	}
	for _, ip := range c.ClusterDNS {
		if net.ParseIP(ip) == nil {
			errs = append(errs, fmt.Errorf("clusterDNS: %q is not an IP address", ip))
		}
	}
	if c.ClusterDomain != "" {
		if msgs := validation.IsDNS1123Subdomain(c.ClusterDomain); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("clusterDomain %q: %s", c.ClusterDomain, strings.Join(msgs, "; ")))
		}
	}
	if len(c.NodeIPs) > 2 {
		errs = append(errs, fmt.Errorf("nodeIPs: at most one IPv4 and one IPv6 address, got %d", len(c.NodeIPs)))
	}
	errs = append(errs, c.validateServing()...)
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("port must be 0 (off) to 65535, got %d", c.Port))
	}
	if c.HealthzPort < 0 || c.HealthzPort > 65535 {
		errs = append(errs, fmt.Errorf("healthzPort must be 0 (off) to 65535, got %d", c.HealthzPort))
	}
	if c.HealthzPort != 0 && net.ParseIP(c.HealthzBindAddress) == nil {
		errs = append(errs, fmt.Errorf("healthzBindAddress must be an IP address, got %q", c.HealthzBindAddress))
	}
	if c.AuthorizationMode != kubeletserver.ModeWebhook && c.AuthorizationMode != kubeletserver.ModeAlwaysAllow {
		errs = append(errs, fmt.Errorf("authorizationMode must be %s or %s, got %q", kubeletserver.ModeWebhook, kubeletserver.ModeAlwaysAllow, c.AuthorizationMode))
	}
	if c.MaxOpenConnections < 1 {
		errs = append(errs, fmt.Errorf("maxOpenConnections must be at least 1, got %d", c.MaxOpenConnections))
	}
	if (c.TLSCertFile == "") != (c.TLSPrivateKeyFile == "") {
		errs = append(errs, errors.New("tlsCertFile and tlsPrivateKeyFile go together: give both or neither"))
	}
	if c.RootDir == "" {
		errs = append(errs, errors.New("rootDir is empty (its default needs a home directory when not run as root); set it"))
	}
	for name, q := range c.Allocatable {
		if name != v1.ResourceCPU && name != v1.ResourceMemory {
			errs = append(errs, fmt.Errorf("allocatable: unknown resource %q (cpu and memory are supported)", name))
		} else if q.Sign() <= 0 {
			errs = append(errs, fmt.Errorf("allocatable %s must be positive, got %s", name, q.String()))
		}
	}
	if err := checkPodLogsDir(c.PodLogsDir); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.ContainerLogMaxBytes(); err != nil {
		errs = append(errs, err)
	}
	if c.ContainerLogMaxFiles < 2 {
		errs = append(errs, fmt.Errorf("containerLogMaxFiles must be at least 2 (the log and one rotated file), got %d", c.ContainerLogMaxFiles))
	}
	if _, err := admission.NewSysctlAdmitter(c.AllowedUnsafeSysctls); err != nil {
		errs = append(errs, fmt.Errorf("allowedUnsafeSysctls: %w", err))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("logFormat must be text or json, got %q", c.LogFormat))
	}
	if _, err := c.ShutdownBands(); err != nil {
		errs = append(errs, err)
	}
	if c.Kubeconfig == "" && (c.BootstrapKubeconfig != "" || c.RotateServerCertificates) {
		errs = append(errs, errors.New("bootstrapKubeconfig and rotateServerCertificates need kubeconfig (the node's kubeconfig, which a bootstrap writes)"))
	}
	return errors.Join(errs...)
}

// ResolvedCertDir is CertDir, or <rootDir>/pki.
func (c *Config) ResolvedCertDir() string {
	if c.CertDir != "" {
		return c.CertDir
	}
	return filepath.Join(c.RootDir, "pki")
}

// allocatableQuantity is the configured amount of a resource, or def.
func (c *Config) allocatableQuantity(name v1.ResourceName, def resource.Quantity) resource.Quantity {
	if q, ok := c.Allocatable[name]; ok {
		return q
	}
	return def
}

// GCPolicy is the container garbage collection policy.
func (c *Config) GCPolicy() containergc.Policy {
	return containergc.Policy{
		MinAge:             c.MinimumContainerTTLDuration.Duration,
		MaxPerPodContainer: c.MaximumDeadContainersPerContainer,
		MaxContainers:      c.MaximumDeadContainers,
	}
}

// ContainerLogMaxBytes is ContainerLogMaxSize in bytes.
func (c *Config) ContainerLogMaxBytes() (int64, error) {
	q, err := resource.ParseQuantity(c.ContainerLogMaxSize)
	if err != nil || q.Sign() <= 0 {
		return 0, fmt.Errorf("containerLogMaxSize must be a positive quantity such as 10Mi, got %q", c.ContainerLogMaxSize)
	}
	return q.Value(), nil
}

// defaultImagePullProgressDeadline is the pull deadline's default. The
// kubelet's --image-pull-progress-deadline was 1 min without progress;
// this one bounds the whole pull (the CRI reports no progress), so it is
// longer: containerd's own image_pull_progress_timeout default.
const defaultImagePullProgressDeadline = 5 * time.Minute

// validatePulls checks the pull settings as the kubelet's validation does.
func (c *Config) validatePulls() []error {
	var errs []error
	if p := c.MaxParallelImagePulls; p != nil && *p < 1 {
		errs = append(errs, fmt.Errorf("maxParallelImagePulls %d must be a positive number", *p))
	}
	if c.SerializeImagePulls != nil && *c.SerializeImagePulls && c.MaxParallelImagePulls != nil && *c.MaxParallelImagePulls > 1 {
		errs = append(errs, errors.New("maxParallelImagePulls cannot be larger than 1 unless serializeImagePulls (--serialize-image-pulls) is set to false"))
	}
	if c.ImagePullProgressDeadline.Duration <= 0 {
		errs = append(errs, fmt.Errorf("imagePullProgressDeadline must be positive, got %s", c.ImagePullProgressDeadline.Duration))
	}
	return errs
}

// ParallelPulls is how many pulls may run at once, 0 for no limit: 1 when
// pulls are serialized (by default unless maxParallelImagePulls is 2 or
// more, as the kubelet defaults serializeImagePulls).
func (c *Config) ParallelPulls() int {
	serialize := c.MaxParallelImagePulls == nil || *c.MaxParallelImagePulls < 2
	if c.SerializeImagePulls != nil {
		serialize = *c.SerializeImagePulls
	}
	switch {
	case serialize:
		return 1
	case c.MaxParallelImagePulls != nil:
		return int(*c.MaxParallelImagePulls)
	}
	return 0
}

// Lanes sizes the CRI lanes (cri.Lanes) from the configuration.
func (c *Config) Lanes() cri.Lanes {
	return cri.Lanes{
		Changes:    c.MaxConcurrentRuntimeCalls,
		ExecPerPod: cri.DefaultExecPerPod, ExecPerNode: cri.DefaultExecPerNode,
		Pulls: c.ParallelPulls(), PullDeadline: c.ImagePullProgressDeadline.Duration,
	}
}
