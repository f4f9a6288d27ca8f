package kubeletconfig

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/podlife/podlife/agent/config"
)

// KubeletConfiguration is the kubelet's configuration file's type.
type KubeletConfiguration = kubeletconfigv1beta1.KubeletConfiguration

// field is what podlife does with one leaf of a KubeletConfiguration.
// A leaf the file leaves unset (its zero value) is always accepted: the
// kubelet would give it its default, and podlife's behaviour is that
// default or the field is one podlife has no use for.
type field struct {
	// apply sets the AgentConfiguration from a set value; nil: podlife
	// does not honour the field.
	apply func(k *KubeletConfiguration, c *config.Config) error
	// same accepts a set value that says what podlife does anyway; nil:
	// no value does.
	same func(k *KubeletConfiguration) bool
	// why podlife does not honour the field, said when a value is refused.
	why string
}

// Reasons shared by several fields.
const (
	noCgroups     = "podlife manages no cgroups yet: no pod cgroups, QoS tiers or node allocatable enforcement (issue 31)"
	noManagers    = "podlife has no CPU, memory or topology manager"
	noEviction    = "podlife does not evict pods under node pressure yet (issue 31)"
	noImageGC     = "podlife does not garbage collect images yet (issue 31)"
	cniOwnsNet    = "the runtime's CNI plugins set up pod networking; podlife configures none of it"
	staticPath    = "podlife reads static pods from staticPodPath only"
	tlsOwn        = "the kubelet API's TLS settings are podlife's own: TLS 1.2 or later with Go's cipher suites and curves"
	slogLogs      = "podlife logs through log/slog with format and verbosity only"
	noHandler     = "podlife does not serve this kubelet debugging endpoint"
	podlifeFixed  = "podlife's value is fixed at the kubelet's default"
	noPullLimits  = "podlife bounds pulls by maxParallelImagePulls, not by a registry request rate"
	noVolumeHooks = "podlife mounts only the volume types its pod-field table accepts; it has no volume plugins or attach/detach"
)

// fields says, for every leaf of KubeletConfiguration by its path, what
// podlife does with it: TestEveryKubeletFieldIsDecided walks the type and
// fails on a leaf missing here, so that a field added upstream is decided
// before it can be silently ignored.
var fields = map[string]field{
	"enableServer": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		if !*k.EnableServer {
			c.Port = 0
		}
		return nil
	}},
	"staticPodPath": {apply: func(k *KubeletConfiguration, c *config.Config) error { c.StaticPodPath = k.StaticPodPath; return nil }},
	"podLogsDir":    {apply: func(k *KubeletConfiguration, c *config.Config) error { c.PodLogsDir = k.PodLogsDir; return nil }},
	"syncFrequency": {apply: func(k *KubeletConfiguration, c *config.Config) error { c.SyncFrequency = k.SyncFrequency; return nil }},
	"fileCheckFrequency": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.FileCheckFrequency = k.FileCheckFrequency
		return nil
	}},
	"httpCheckFrequency": {why: staticPath},
	"staticPodURL":       {why: staticPath},
	"staticPodURLHeader": {why: staticPath},
	"address": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		if k.Address != "" {
			c.Address = k.Address
		}
		return nil
	}},
	"port": {apply: func(k *KubeletConfiguration, c *config.Config) error { c.Port = int(k.Port); return nil }},
	// The read-only port serves on address, as the kubelet's does.
	"readOnlyPort": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.ReadOnlyPort = int(k.ReadOnlyPort)
		return nil
	}},
	"tlsCertFile": {apply: func(k *KubeletConfiguration, c *config.Config) error { c.TLSCertFile = k.TLSCertFile; return nil }},
	"tlsPrivateKeyFile": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.TLSPrivateKeyFile = k.TLSPrivateKeyFile
		return nil
	}},
	"tlsCipherSuites":     {why: tlsOwn},
	"tlsCurvePreferences": {why: tlsOwn},
	"tlsMinVersion":       {same: func(k *KubeletConfiguration) bool { return k.TLSMinVersion == "VersionTLS12" }, why: tlsOwn},
	// Checked against the command line's flags by Merged.
	"rotateCertificates": {apply: func(*KubeletConfiguration, *config.Config) error { return nil }},
	"serverTLSBootstrap": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.RotateServerCertificates = k.ServerTLSBootstrap
		return nil
	}},
	"authentication.x509.clientCAFile": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.ClientCAFile = k.Authentication.X509.ClientCAFile
		return nil
	}},
	// Checked against the command line's flags by Merged.
	"authentication.webhook.enabled": {apply: func(*KubeletConfiguration, *config.Config) error { return nil }},
	"authentication.webhook.cacheTTL": {same: func(k *KubeletConfiguration) bool {
		return k.Authentication.Webhook.CacheTTL.Duration == 2*time.Minute
	}, why: podlifeFixed + " (2m)"},
	"authentication.anonymous.enabled": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.AnonymousAuth = *k.Authentication.Anonymous.Enabled
		return nil
	}},
	"authorization.mode": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.AuthorizationMode = string(k.Authorization.Mode)
		return nil
	}},
	"authorization.webhook.cacheAuthorizedTTL": {why: "podlife asks the API server about every kubelet API request (no authorization cache)"},
	"authorization.webhook.cacheUnauthorizedTTL": {same: func(k *KubeletConfiguration) bool {
		return k.Authorization.Webhook.CacheUnauthorizedTTL.Duration == 30*time.Second
	}, why: podlifeFixed + " (30s, for refused tokens)"},
	"registryPullQPS":                        {why: noPullLimits},
	"registryBurst":                          {why: noPullLimits},
	"imagePullCredentialsVerificationPolicy": {why: "podlife does not verify the credentials of images already pulled"},
	"preloadedImagesVerificationAllowlist":   {why: "podlife does not verify the credentials of images already pulled"},
	"eventRecordQPS":                         {why: "podlife's events share the API client's rate (kubeAPIQPS)"},
	"eventBurst":                             {why: "podlife's events share the API client's rate (kubeAPIBurst)"},
	"enableDebuggingHandlers":                {same: func(k *KubeletConfiguration) bool { return *k.EnableDebuggingHandlers }, why: "podlife always serves logs, exec, attach and port-forward on the kubelet API"},
	"enableContentionProfiling":              {why: noHandler},
	"healthzPort": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.HealthzPort = int(*k.HealthzPort)
		return nil
	}},
	"healthzBindAddress": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.HealthzBindAddress = k.HealthzBindAddress
		return nil
	}},
	"oomScoreAdj":   {why: "podlife does not set its own OOM score"},
	"clusterDomain": {apply: func(k *KubeletConfiguration, c *config.Config) error { c.ClusterDomain = k.ClusterDomain; return nil }},
	"clusterDNS":    {apply: func(k *KubeletConfiguration, c *config.Config) error { c.ClusterDNS = k.ClusterDNS; return nil }},
	"resolvConf": {same: func(k *KubeletConfiguration) bool { return *k.ResolverConfig == "/etc/resolv.conf" },
		why: "podlife reads the node's resolver configuration from /etc/resolv.conf"},
	"streamingConnectionIdleTimeout": {why: "podlife's streams end with their CRI call, after 5 min at most"},
	"nodeStatusUpdateFrequency": {same: func(k *KubeletConfiguration) bool {
		return k.NodeStatusUpdateFrequency.Duration == 10*time.Second
	}, why: podlifeFixed + " (10s)"},
	"nodeStatusReportFrequency": {same: func(k *KubeletConfiguration) bool {
		return k.NodeStatusReportFrequency.Duration == 5*time.Minute
	}, why: podlifeFixed + " (5m)"},
	"nodeLeaseDurationSeconds":     {same: func(k *KubeletConfiguration) bool { return k.NodeLeaseDurationSeconds == 40 }, why: podlifeFixed + " (40)"},
	"imageMinimumGCAge":            {why: noImageGC},
	"imageMaximumGCAge":            {why: noImageGC},
	"imageGCHighThresholdPercent":  {why: noImageGC},
	"imageGCLowThresholdPercent":   {why: noImageGC},
	"volumeStatsAggPeriod":         {why: "podlife measures volumes when /stats/summary is asked for"},
	"kubeletCgroups":               {why: noCgroups},
	"systemCgroups":                {why: noCgroups},
	"cgroupRoot":                   {why: noCgroups},
	"cgroupsPerQOS":                {same: func(k *KubeletConfiguration) bool { return !*k.CgroupsPerQOS }, why: noCgroups},
	"cgroupDriver":                 {why: noCgroups},
	"cpuManagerPolicy":             {same: func(k *KubeletConfiguration) bool { return k.CPUManagerPolicy == "none" }, why: noManagers},
	"singleProcessOOMKill":         {why: noCgroups},
	"cpuManagerPolicyOptions":      {why: noManagers},
	"cpuManagerReconcilePeriod":    {why: noManagers},
	"memoryManagerPolicy":          {same: func(k *KubeletConfiguration) bool { return k.MemoryManagerPolicy == "None" }, why: noManagers},
	"topologyManagerPolicy":        {same: func(k *KubeletConfiguration) bool { return k.TopologyManagerPolicy == "none" }, why: noManagers},
	"topologyManagerScope":         {why: noManagers},
	"topologyManagerPolicyOptions": {why: noManagers},
	"qosReserved":                  {why: noCgroups},
	"runtimeRequestTimeout":        {why: "podlife bounds each CRI call by its own deadline"},
	"hairpinMode":                  {why: cniOwnsNet},
	"maxPods":                      {apply: func(k *KubeletConfiguration, c *config.Config) error { c.MaxPods = int(k.MaxPods); return nil }},
	"podCIDR":                      {why: cniOwnsNet},
	"podPidsLimit":                 {why: noCgroups},
	"runOnce":                      {why: "podlife runs as a daemon only"},
	"cpuCFSQuota":                  {same: func(k *KubeletConfiguration) bool { return *k.CPUCFSQuota }, why: "podlife passes CPU limits to the runtime as CFS quotas"},
	"cpuCFSQuotaPeriod":            {same: func(k *KubeletConfiguration) bool { return k.CPUCFSQuotaPeriod.Duration == 100*time.Millisecond }, why: podlifeFixed + " (100ms)"},
	"nodeStatusMaxImages":          {same: func(k *KubeletConfiguration) bool { return *k.NodeStatusMaxImages == 0 }, why: "podlife reports no images in the Node's status"},
	"maxOpenFiles":                 {why: "podlife does not raise its own open-file limit"},
	"contentType":                  {same: func(k *KubeletConfiguration) bool { return k.ContentType == "application/vnd.kubernetes.protobuf" }, why: podlifeFixed + " (protobuf)"},
	"kubeAPIQPS":                   {same: func(k *KubeletConfiguration) bool { return *k.KubeAPIQPS == 50 }, why: podlifeFixed + " (50)"},
	"kubeAPIBurst":                 {same: func(k *KubeletConfiguration) bool { return k.KubeAPIBurst == 100 }, why: podlifeFixed + " (100)"},
	"serializeImagePulls": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.SerializeImagePulls = k.SerializeImagePulls
		return nil
	}},
	"maxParallelImagePulls": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.MaxParallelImagePulls = k.MaxParallelImagePulls
		return nil
	}},
	"evictionHard":                     {why: noEviction},
	"evictionSoft":                     {why: noEviction},
	"evictionSoftGracePeriod":          {why: noEviction},
	"evictionPressureTransitionPeriod": {why: noEviction},
	"evictionMaxPodGracePeriod":        {why: noEviction},
	"evictionMinimumReclaim":           {why: noEviction},
	"mergeDefaultEvictionSettings":     {why: noEviction},
	"podsPerCore":                      {why: "podlife's pod capacity is maxPods"},
	"enableControllerAttachDetach":     {same: func(k *KubeletConfiguration) bool { return *k.EnableControllerAttachDetach }, why: noVolumeHooks},
	"protectKernelDefaults":            {why: "podlife does not check the kernel's tunables"},
	"makeIPTablesUtilChains":           {same: func(k *KubeletConfiguration) bool { return !*k.MakeIPTablesUtilChains }, why: cniOwnsNet},
	"iptablesMasqueradeBit":            {why: cniOwnsNet},
	"iptablesDropBit":                  {why: cniOwnsNet},
	"featureGates":                     {why: "podlife has no feature gates: what it does is on"},
	"failSwapOn":                       {same: func(k *KubeletConfiguration) bool { return !*k.FailSwapOn }, why: "podlife does not check whether the node has swap"},
	"memorySwap.swapBehavior":          {same: func(k *KubeletConfiguration) bool { return k.MemorySwap.SwapBehavior == "NoSwap" }, why: "podlife gives containers no swap"},
	"containerLogMaxSize": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.ContainerLogMaxSize = k.ContainerLogMaxSize
		return nil
	}},
	"containerLogMaxFiles": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.ContainerLogMaxFiles = int(*k.ContainerLogMaxFiles)
		return nil
	}},
	"containerLogMaxWorkers": {same: func(k *KubeletConfiguration) bool { return *k.ContainerLogMaxWorkers == 1 }, why: "podlife rotates logs with one worker"},
	"containerLogMonitorInterval": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.ContainerLogMonitorInterval = *k.ContainerLogMonitorInterval
		return nil
	}},
	"configMapAndSecretChangeDetectionStrategy": {same: func(k *KubeletConfiguration) bool {
		return k.ConfigMapAndSecretChangeDetectionStrategy == kubeletconfigv1beta1.WatchChangeDetectionStrategy
	}, why: "podlife watches the Secrets and ConfigMaps its pods use"},
	"systemReserved":              {why: noCgroups},
	"kubeReserved":                {why: noCgroups},
	"reservedSystemCPUs":          {why: noManagers},
	"showHiddenMetricsForVersion": {why: "podlife hides no metrics"},
	"systemReservedCgroup":        {why: noCgroups},
	"kubeReservedCgroup":          {why: noCgroups},
	"enforceNodeAllocatable":      {why: noCgroups},
	"allowedUnsafeSysctls": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.AllowedUnsafeSysctls = k.AllowedUnsafeSysctls
		return nil
	}},
	"defaultPodSysctls":       {why: "podlife sets only the sysctls a pod asks for"},
	"volumePluginDir":         {why: noVolumeHooks},
	"providerID":              {why: "podlife registers no cloud provider ID"},
	"kernelMemcgNotification": {why: noEviction},
	"logging.format": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.LogFormat = k.Logging.Format
		return nil
	}},
	"logging.flushFrequency": {why: slogLogs},
	"logging.verbosity": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.Verbosity = int(k.Logging.Verbosity)
		return nil
	}},
	"logging.vmodule":                     {why: slogLogs},
	"logging.options.text.splitStream":    {why: slogLogs},
	"logging.options.text.infoBufferSize": {why: slogLogs},
	"logging.options.json.splitStream":    {why: slogLogs},
	"logging.options.json.infoBufferSize": {why: slogLogs},
	"enableSystemLogHandler":              {same: func(k *KubeletConfiguration) bool { return !*k.EnableSystemLogHandler }, why: noHandler},
	"enableSystemLogQuery":                {same: func(k *KubeletConfiguration) bool { return !*k.EnableSystemLogQuery }, why: noHandler},
	"shutdownGracePeriod": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.ShutdownGracePeriod = k.ShutdownGracePeriod
		return nil
	}},
	"shutdownGracePeriodCriticalPods": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.ShutdownGracePeriodCriticalPods = k.ShutdownGracePeriodCriticalPods
		return nil
	}},
	"shutdownGracePeriodByPodPriority": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.ShutdownGracePeriodByPodPriority = nil
		for _, b := range k.ShutdownGracePeriodByPodPriority {
			c.ShutdownGracePeriodByPodPriority = append(c.ShutdownGracePeriodByPodPriority, config.ShutdownGracePeriodByPodPriority{
				Priority: b.Priority, ShutdownGracePeriodSeconds: b.ShutdownGracePeriodSeconds,
			})
		}
		return nil
	}},
	"crashLoopBackOff.maxContainerRestartPeriod": {same: func(k *KubeletConfiguration) bool {
		return k.CrashLoopBackOff.MaxContainerRestartPeriod.Duration == 5*time.Minute
	}, why: podlifeFixed + " (5m)"},
	"reservedMemory":          {why: noManagers},
	"enableProfilingHandler":  {same: func(k *KubeletConfiguration) bool { return !*k.EnableProfilingHandler }, why: noHandler},
	"enableDebugFlagsHandler": {same: func(k *KubeletConfiguration) bool { return !*k.EnableDebugFlagsHandler }, why: noHandler},
	"seccompDefault": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.SeccompDefault = *k.SeccompDefault
		return nil
	}},
	"memoryThrottlingFactor":  {why: noCgroups},
	"memoryReservationPolicy": {why: noManagers},
	"registerWithTaints": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.RegisterWithTaints = k.RegisterWithTaints
		return nil
	}},
	// Checked against the command line's flags by Merged.
	"registerNode":                  {apply: func(*KubeletConfiguration, *config.Config) error { return nil }},
	"tracing":                       {why: "podlife exports no traces"},
	"localStorageCapacityIsolation": {same: func(k *KubeletConfiguration) bool { return !*k.LocalStorageCapacityIsolation }, why: "podlife does not account ephemeral storage yet (issue 31)"},
	"containerRuntimeEndpoint": {apply: func(k *KubeletConfiguration, c *config.Config) error {
		c.RuntimeEndpoint = k.ContainerRuntimeEndpoint
		return nil
	}},
	"imageServiceEndpoint": {same: func(k *KubeletConfiguration) bool {
		return k.ImageServiceEndpoint == k.ContainerRuntimeEndpoint
	}, why: "podlife pulls images through containerRuntimeEndpoint"},
	"failCgroupV1":   {why: noCgroups},
	"userNamespaces": {why: "podlife maps no user namespaces"},
}

// File is a decoded KubeletConfiguration file.
type File struct {
	Path string
	k    KubeletConfiguration
}

// ReadFile reads a KubeletConfiguration file, refusing fields the type
// does not have.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	f := &File{Path: path}
	if err := yaml.UnmarshalStrict(data, &f.k); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	if f.k.Kind != Kind || f.k.APIVersion != APIVersion {
		return nil, fmt.Errorf("config file %s: kind %q apiVersion %q, want %s %s", path, f.k.Kind, f.k.APIVersion, Kind, APIVersion)
	}
	return f, nil
}

// IsKubeletConfiguration reports whether the file at path declares the
// kubelet's kind, so that --config can take either kind.
func IsKubeletConfiguration(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var tm metav1.TypeMeta
	return yaml.Unmarshal(data, &tm) == nil && tm.Kind == Kind && tm.APIVersion == APIVersion
}

// Apply sets c from every field the file sets that podlife honours, and
// refuses, all at once, every field it sets that podlife does not honour,
// naming each and saying why.
func (f *File) Apply(c *config.Config) error {
	var errs []error
	for _, l := range leaves(reflect.ValueOf(&f.k).Elem(), "") {
		if !isSet(l.Value) {
			continue
		}
		fd, ok := fields[l.Path]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: podlife does not know this field", l.Path))
		case fd.apply != nil:
			if err := fd.apply(&f.k, c); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", l.Path, err))
			}
		case fd.same == nil || !fd.same(&f.k):
			errs = append(errs, fmt.Errorf("%s: not honoured: %s", l.Path, fd.why))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("config file %s:\n%w", f.Path, err)
	}
	return nil
}

// Merged checks the file's fields whose meaning depends on the command
// line (kubeadm passes --kubeconfig and --bootstrap-kubeconfig as flags):
// c is the configuration after the flags.
func (f *File) Merged(c *config.Config) error {
	k := &f.k
	var errs []error
	if k.RotateCertificates && c.BootstrapKubeconfig == "" {
		errs = append(errs, errors.New("rotateCertificates: podlife rotates a client certificate it bootstrapped: give --bootstrap-kubeconfig"))
	}
	inCluster := c.Kubeconfig != ""
	if w := k.Authentication.Webhook.Enabled; w != nil && *w != inCluster {
		errs = append(errs, fmt.Errorf("authentication.webhook.enabled %t: podlife reviews bearer tokens exactly when it is in a cluster (--kubeconfig)", *w))
	}
	if r := k.RegisterNode; r != nil && *r != inCluster {
		errs = append(errs, fmt.Errorf("registerNode %t: podlife registers its Node exactly when it is in a cluster (--kubeconfig)", *r))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("config file %s:\n%w", f.Path, err)
	}
	return nil
}
