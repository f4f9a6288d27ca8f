package kuberuntime

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/dns"
	"github.com/podlife/podlife/cri/logs"
	"github.com/podlife/podlife/cri/podfiles"
	"github.com/podlife/podlife/cri/podplan"
	"github.com/podlife/podlife/cri/securitycontext"
)

// defaultGracePeriod is the API's default terminationGracePeriodSeconds.
const defaultGracePeriod = 30

// podGracePeriod is the pod's own termination grace period in seconds.
func podGracePeriod(pod *v1.Pod) int64 {
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil && *g >= 0 {
		return *g
	}
	return defaultGracePeriod
}

// podLabels are the labels every sandbox and container of pod carries.
func podLabels(pod *v1.Pod) map[string]string {
	return map[string]string{
		cri.PodNameLabel:      pod.Name,
		cri.PodNamespaceLabel: pod.Namespace,
		cri.PodUIDLabel:       string(pod.UID),
	}
}

// sandboxConfig describes the attempt-th sandbox of pod. logRoot, when set,
// is where the runtime writes container logs (one directory per pod).
func sandboxConfig(pod *v1.Pod, attempt uint32, logRoot string) (*runtimeapi.PodSandboxConfig, error) {
	labels := podLabels(pod)
	for k, v := range pod.Labels {
		if _, ours := labels[k]; !ours {
			labels[k] = v
		}
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt,
		},
		Labels:      labels,
		Annotations: maps.Clone(pod.Annotations),
		Linux:       &runtimeapi.LinuxPodSandboxConfig{Sysctls: securitycontext.Sysctls(pod)},
	}
	var err error
	if cfg.Linux.SecurityContext, err = securitycontext.Sandbox(pod); err != nil {
		return nil, err
	}
	if !pod.Spec.HostNetwork {
		// A pod on the node's network has the node's UTS namespace too, and
		// so its hostname: runc refuses to set one without a UTS namespace
		// of its own (the kubelet sets none either).
		hostname, err := podfiles.KernelHostname(pod)
		if err != nil {
			return nil, err
		}
		cfg.Hostname = hostname
	}
	if logRoot != "" {
		dir, err := logs.PodDir(logRoot, pod)
		if err != nil {
			return nil, err
		}
		cfg.LogDirectory = dir
	}
	return cfg, nil
}

// containerConfig describes the attempt-th instance of container c of pod.
// With logs, the container's name is a directory under the pod's.
func containerConfig(pod *v1.Pod, c *v1.Container, attempt uint32, withLogs bool) (*runtimeapi.ContainerConfig, error) {
	labels := podLabels(pod)
	labels[cri.ContainerNameLabel] = c.Name
	cfg := &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: attempt},
		Image:      &runtimeapi.ImageSpec{Image: c.Image, UserSpecifiedImage: c.Image},
		Command:    c.Command,
		Args:       c.Args,
		WorkingDir: c.WorkingDir,
		// A terminal and an open stdin, for attach (the kubelet's
		// generateContainerConfig).
		Stdin:     c.Stdin,
		StdinOnce: c.StdinOnce,
		Tty:       c.TTY,
		Labels:    labels,
		Annotations: map[string]string{
			cri.RestartCountAnnotation:  strconv.FormatUint(uint64(attempt), 10),
			cri.ContainerHashAnnotation: podplan.ContainerHash(c),
			cri.GracePeriodAnnotation:   strconv.FormatInt(podGracePeriod(pod), 10),
		},
		Linux: &runtimeapi.LinuxContainerConfig{
			// The pod's namespaces again: the runtime reads a container's
			// from its own config (see securitycontext.Namespaces). The
			// syncer replaces this with the container's whole context
			// once it knows the image's user (containerSecurity).
			SecurityContext: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: securitycontext.Namespaces(pod)},
		},
	}
	if l := c.Lifecycle; l != nil && l.StopSignal != nil {
		sig, ok := cri.RuntimeSignal(*l.StopSignal)
		if !ok {
			return nil, fmt.Errorf("container %q of pod %s/%s: lifecycle.stopSignal %q is not a signal the CRI knows",
				c.Name, pod.Namespace, pod.Name, *l.StopSignal)
		}
		cfg.StopSignal = sig
	}
	if withLogs {
		if err := cri.PathElement(pod, "container name", c.Name); err != nil {
			return nil, err
		}
		cfg.LogPath = logPath(c.Name, attempt)
	}
	return cfg, nil
}

// logPath is the log of the attempt-th instance of a container, relative
// to its pod's log directory: <container>/<restart count>.log, as the
// kubelet's BuildContainerLogsDirectory and its file name.
func logPath(container string, attempt uint32) string {
	return filepath.Join(container, strconv.FormatUint(uint64(attempt), 10)+".log")
}

// ensureDir creates a log directory; "" means no logs.
func ensureDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("pod log directory: %w", err)
	}
	return nil
}

// setDNS gives a new sandbox the pod's DNS configuration (the kubelet's
// GetPodDNS), with the kubelet's warnings: MissingClusterDNS, and
// DNSConfigForming for what the resolver's limits cut.
func (s *Syncer) setDNS(pod *v1.Pod, cfg *runtimeapi.PodSandboxConfig) error {
	resolvConf := s.opts.ResolvConf
	if resolvConf == "" {
		resolvConf = dns.NodeResolvConf
	}
	dnsConfig, warnings, err := dns.Config(pod, resolvConf, s.opts.ClusterDNS)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		s.opts.Events.Eventf(pod, v1.EventTypeWarning, w.Reason, "%s", w.Message)
	}
	cfg.DnsConfig = dnsConfig
	return nil
}
