package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/config/kubeletconfig"
)

func runCommand() *cobra.Command {
	var (
		configFile string
		flagCfg    = config.Default()
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the node agent: static pod manifests on a CRI runtime",
		Long: `run is the podlife node agent. It runs the static pods of --pod-manifest-path on the CRI
runtime at --runtime-endpoint (containerd, for example) through the pod lifecycle engine, the way
a standalone kubelet does: it watches the directory, admits pods against allocatable CPU and
memory, restarts containers as their restart policy says, kills runtime pods nobody knows, and
answers podlife status, logs and shutdown on its control socket (podlife.sock in --root-dir). With
--read-only-port (off by default, as the kubelet's) it also serves, on --address (0.0.0.0), plain
HTTP and without authentication, /healthz, /pods (without env values, commands or args),
/metrics, /metrics/probes, /metrics/resource, /stats/summary and /lifecycle, read-only. The
kubelet's healthz port, --healthz-port (10248) on --healthz-bind-address (127.0.0.1), serves GET
/healthz only (kubeadm's kubelet-check polls it); 0 turns it off. In a cluster
(--kubeconfig) it also serves the kubelet API on --port (10250), HTTPS, authenticated and
authorized as the kubelet's: logs, exec, attach, port-forward, /pods, /metrics, /stats.

--root-dir (default /var/lib/podlife for root, ~/.local/state/podlife otherwise) is created mode
0700 if missing, and refused if another user owns it, group or others may write it, or a symbolic
link leads to it. It holds the control socket podlife.sock (mode 0600: only the agent's user and
root may use it), the embedded runtime's socket and the pod logs.

With no --runtime-endpoint it starts an embedded CRI runtime in which containers do not really
run: every step of the lifecycle happens, but no process is started.

Settings come from --config (an AgentConfiguration file) and flags; a flag that is set wins.
SIGTERM and SIGINT stop the agent (systemctl stop or restart, an upgrade): on a real runtime its
pods keep running, and the next agent adopts them; on the embedded one they end with it.

A node shutdown comes from systemd-logind, as the kubelet's graceful node shutdown does: when
shutdown grace periods are configured, the agent holds a delay inhibitor lock on the system bus
(DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket; logind's InhibitDelayMaxSec should be
at least the whole grace period) and, when logind announces the shutdown, rejects new pods, stops
the running ones band by band from the lowest priority, then releases the lock and runs on until
the system stops it. 'podlife shutdown' (over the control socket) does the same by hand, then the
agent exits 0. Without grace periods there is no lock, and 'podlife shutdown' says that graceful
node shutdown is disabled and the agent exits at once, stopping no pod.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := resolveConfig(cmd.Flags(), configFile)
			if err != nil {
				return err
			}
			return runAgent(cmd.Context(), cfg)
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "configuration file: the kubelet's (kind KubeletConfiguration, apiVersion "+kubeletconfig.APIVersion+"; a field podlife does not honour is refused, naming it) or podlife's own (kind AgentConfiguration, apiVersion "+config.APIVersion+")")
	addConfigFlags(cmd.Flags(), &flagCfg)
	return cmd
}

// addConfigFlags binds the flags that override configuration fields.
func addConfigFlags(fs *pflag.FlagSet, c *config.Config) {
	fs.StringVar(&c.NodeName, "node-name", c.NodeName, "node name; static pod names get -<node-name>")
	fs.StringVar(&c.NodeName, "hostname-override", c.NodeName, "the kubelet's name for --node-name: the node's name instead of the host name")
	fs.Var(labelsFlag{&c.NodeLabels}, "node-labels", "labels set on the Node besides the kubelet's own, key=value,... (NodeRestriction's forbidden ones are refused)")
	fs.StringSliceVar(&c.NodeIPs, "node-ip", c.NodeIPs, "the node's InternalIP addresses (one IPv4, one IPv6 at most); empty: the host's own")
	fs.Var(taintsFlag{&c.RegisterWithTaints}, "register-with-taints", "taints set on the Node when the agent creates it, key[=value]:Effect,...")
	fs.StringSliceVar(&c.ClusterDNS, "cluster-dns", c.ClusterDNS, "IPs of the cluster's DNS servers, which ClusterFirst pods resolve with; empty: the node's resolv.conf (and a MissingClusterDNS warning per pod)")
	fs.StringVar(&c.ClusterDomain, "cluster-domain", c.ClusterDomain, "the cluster's domain, searched by ClusterFirst pods after <namespace>.svc.<domain> and svc.<domain>")
	fs.StringVar(&c.StaticPodPath, "pod-manifest-path", c.StaticPodPath, "directory of static pod manifests (YAML or JSON)")
	fs.DurationVar(&c.FileCheckFrequency.Duration, "file-check-frequency", c.FileCheckFrequency.Duration, "how often the manifest directory is read")
	fs.StringVar(&c.Kubeconfig, "kubeconfig", c.Kubeconfig, "kubeconfig of the node's identity (system:node:<node-name>): join that cluster; empty: static pods only")
	fs.StringVar(&c.BootstrapKubeconfig, "bootstrap-kubeconfig", c.BootstrapKubeconfig, "kubeconfig of a bootstrap token: while --kubeconfig is missing or its certificate invalid, request a node client certificate with it and write --kubeconfig; the certificate is then rotated")
	fs.BoolVar(&c.RotateServerCertificates, "rotate-server-certificates", c.RotateServerCertificates, "request the serving certificate from the CSR API (signer kubernetes.io/kubelet-serving); an admin approves it with kubectl certificate approve")
	fs.StringVar(&c.RuntimeEndpoint, "runtime-endpoint", c.RuntimeEndpoint, "CRI runtime socket, e.g. unix:///run/containerd/containerd.sock; empty: the embedded runtime")
	fs.StringVar(&c.RuntimeEndpoint, "container-runtime-endpoint", c.RuntimeEndpoint, "the kubelet's name for --runtime-endpoint")
	fs.StringVar(&c.RootDir, "root-dir", c.RootDir, "the agent's own directory for its control socket, the embedded runtime's socket and pod logs (created 0700; refused if others may write it)")
	fs.StringVar(&c.Address, "address", c.Address, "the IP the kubelet API (--port) and the read-only port (--read-only-port) listen on, as the kubelet's --address; 0.0.0.0: every interface. Deprecated (refused from the next release): host:port, the read-only endpoint's own address")
	fs.IntVar(&c.ReadOnlyPort, "read-only-port", c.ReadOnlyPort, "the kubelet's read-only port on --address: plain HTTP without authentication, GET /healthz, /pods (without env values, commands or args), /metrics, /metrics/probes, /metrics/resource, /stats/summary and /lifecycle, for anyone who reaches it; 0: off. Status, logs and control are on the socket in --root-dir")
	fs.IntVar(&c.Port, "port", c.Port, "the kubelet API's HTTPS port (logs, exec, attach, port-forward, /pods, /metrics, /stats); 0: off. Standalone (no --kubeconfig) it serves only with --authorization-mode AlwaysAllow and --client-ca-file (or --anonymous-auth: anyone who reaches the port), and stays off otherwise")
	fs.StringVar(&c.BindAddress, "bind-address", c.BindAddress, "deprecated (refused from the next release): --address, the kubelet's name")
	fs.IntVar(&c.HealthzPort, "healthz-port", c.HealthzPort, "port of the healthz endpoint (plain HTTP, GET /healthz only; kubeadm's kubelet-check polls it); 0: off")
	fs.StringVar(&c.HealthzBindAddress, "healthz-bind-address", c.HealthzBindAddress, "the IP the healthz endpoint listens on")
	fs.StringVar(&c.TLSCertFile, "tls-cert-file", c.TLSCertFile, "the kubelet API's serving certificate (PEM); without it and --tls-private-key-file, a self-signed one is made in --cert-dir")
	fs.StringVar(&c.TLSPrivateKeyFile, "tls-private-key-file", c.TLSPrivateKeyFile, "the key of --tls-cert-file")
	fs.StringVar(&c.CertDir, "cert-dir", c.CertDir, "directory of the agent's certificates and keys (created 0700, files 0600): the bootstrapped client certificate, the serving certificates; empty: <root-dir>/pki")
	fs.StringVar(&c.ClientCAFile, "client-ca-file", c.ClientCAFile, "CA bundle of the client certificates the kubelet API accepts (CN: user, O: groups)")
	fs.BoolVar(&c.AnonymousAuth, "anonymous-auth", c.AnonymousAuth, "let kubelet API requests without credentials in as system:anonymous (then authorized as any user)")
	fs.StringVar(&c.AuthorizationMode, "authorization-mode", c.AuthorizationMode, "kubelet API authorization: Webhook (SubjectAccessReview to the API server; needs --kubeconfig) or AlwaysAllow (every authenticated user)")
	fs.IntVar(&c.MaxOpenConnections, "max-open-connections", c.MaxOpenConnections, "the kubelet API's open connections at most (more wait until one closes); a connection none of whose requests authenticated is closed after 10 s idle")
	fs.DurationVar(&c.HousekeepingInterval.Duration, "housekeeping-interval", c.HousekeepingInterval.Duration, "how often the engine is reconciled with manifests and runtime")
	fs.DurationVar(&c.SyncFrequency.Duration, "sync-frequency", c.SyncFrequency.Duration, "how often a running pod is resynced")
	fs.DurationVar(&c.RuntimePollInterval.Duration, "runtime-poll-interval", c.RuntimePollInterval.Duration, "how often the runtime status cache polls the runtime")
	fs.IntVar(&c.MaxConcurrentRuntimeCalls, "max-concurrent-runtime-calls", c.MaxConcurrentRuntimeCalls, "CRI calls that change the runtime in flight at once (and, apart from them, reads); container and sandbox stops, hooks, probes and pulls have lanes of their own")
	fs.Var(boolPtrFlag{&c.SerializeImagePulls}, "serialize-image-pulls", "pull images one at a time (default true unless maxParallelImagePulls is 2 or more)")
	fs.Lookup("serialize-image-pulls").NoOptDefVal = "true"
	fs.DurationVar(&c.ImagePullProgressDeadline.Duration, "image-pull-progress-deadline", c.ImagePullProgressDeadline.Duration, "cancel an image pull not completed after this long (the CRI reports no progress, so this bounds the whole pull)")
	fs.IntVar(&c.MaxPods, "max-pods", c.MaxPods, "the node's pod capacity: a pod beyond it is rejected (OutOfpods)")
	fs.Var(resourceListFlag{&c.Allocatable}, "allocatable", "CPU and memory pods may request, e.g. cpu=2,memory=4Gi; unset: the machine's")
	fs.DurationVar(&c.ShutdownGracePeriod.Duration, "shutdown-grace-period", c.ShutdownGracePeriod.Duration, "total time a node shutdown waits for pods; 0 disables graceful shutdown")
	fs.DurationVar(&c.ShutdownGracePeriodCriticalPods.Duration, "shutdown-grace-period-critical-pods", c.ShutdownGracePeriodCriticalPods.Duration, "the last part of --shutdown-grace-period, reserved for critical pods")
	fs.StringVar(&c.PodLogsDir, "pod-logs-dir", c.PodLogsDir, "the pod log root, the kubelet's podLogsDir: container logs in <namespace>_<name>_<uid>/<container>/<restart>.log under it, the links log shippers read in its sibling containers/ (default /var/log/pods for root, so /var/log/containers; empty: <root-dir>/pods)")
	fs.StringVar(&c.ContainerLogMaxSize, "container-log-max-size", c.ContainerLogMaxSize, "size at which a container's log is rotated (a quantity, e.g. 10Mi)")
	fs.IntVar(&c.ContainerLogMaxFiles, "container-log-max-files", c.ContainerLogMaxFiles, "files of a container's log kept, the current one included (at least 2)")
	fs.DurationVar(&c.MinimumContainerTTLDuration.Duration, "minimum-container-ttl-duration", c.MinimumContainerTTLDuration.Duration, "minimum age of a finished container before it is garbage collected, e.g. 300ms, 10s or 2h45m")
	fs.IntVar(&c.MaximumDeadContainersPerContainer, "maximum-dead-containers-per-container", c.MaximumDeadContainersPerContainer, "maximum number of old instances kept per container of a pod (the newest instance is always kept); negative: no limit")
	fs.IntVar(&c.MaximumDeadContainers, "maximum-dead-containers", c.MaximumDeadContainers, "maximum number of old container instances kept on the node; negative: no limit")
	fs.BoolVar(&c.SeccompDefault, "seccomp-default", c.SeccompDefault, "run a container whose pod and container name no seccomp profile with the runtime's default one (RuntimeDefault) instead of Unconfined, as the kubelet's --seccomp-default")
	fs.StringSliceVar(&c.AllowedUnsafeSysctls, "allowed-unsafe-sysctls", c.AllowedUnsafeSysctls, "unsafe sysctls or patterns (kernel.msg*, net.core.somaxconn) pods may set besides the safe ones; only namespaced sysctls may be listed. A pod setting another is rejected (SysctlForbidden)")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log format: text or json")
	fs.IntVarP(&c.Verbosity, "v", "v", c.Verbosity, "log verbosity: 0 info, 1 debug")
}

// resolveConfig is the defaults, then the configuration file, then every
// flag set on the command line.
func resolveConfig(fs *pflag.FlagSet, configFile string) (config.Config, error) {
	cfg := config.Default()
	var kubeletFile *kubeletconfig.File
	switch {
	case configFile == "":
	case kubeletconfig.IsKubeletConfiguration(configFile):
		var err error
		if kubeletFile, err = kubeletconfig.ReadFile(configFile); err != nil {
			return cfg, err
		}
		if err := kubeletFile.Apply(&cfg); err != nil {
			return cfg, err
		}
	default:
		if err := config.LoadFile(configFile, &cfg); err != nil {
			return cfg, err
		}
	}
	onto := pflag.NewFlagSet("config", pflag.ContinueOnError)
	addConfigFlags(onto, &cfg)
	var err error
	fs.Visit(func(f *pflag.Flag) {
		dst := onto.Lookup(f.Name)
		if dst == nil || err != nil {
			return
		}
		// A list's String is "[a,b]", which Set would read as one
		// element: lists are copied as lists.
		if src, ok := f.Value.(pflag.SliceValue); ok {
			err = dst.Value.(pflag.SliceValue).Replace(src.GetSlice())
			return
		}
		err = onto.Set(f.Name, f.Value.String())
	})
	if err != nil {
		return cfg, err
	}
	if kubeletFile != nil {
		if err := kubeletFile.Merged(&cfg); err != nil {
			return cfg, err
		}
	}
	return cfg, cfg.Validate()
}

// newLogger is a structured logger on stderr.
func newLogger(format string, verbosity int) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if verbosity > 0 {
		opts.Level = slog.LevelDebug
	}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// runAgent runs the agent until SIGTERM or SIGINT, which leave the pods
// running for the next agent (as a kubelet's restart does), or until a
// node shutdown asked for by hand (POST /shutdown on the control socket)
// completed.
func runAgent(ctx context.Context, cfg config.Config) error {
	log := newLogger(cfg.LogFormat, cfg.Verbosity)
	klog.SetSlogLogger(log) // the CRI client logs through klog
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := agent.New(ctx, cfg, agent.Options{Logger: log})
	if err != nil {
		return err
	}
	if err := a.Run(ctx); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}
