package agent

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/agent/config/kubeletconfig"
	"github.com/podlife/podlife/agent/kubeletserver"
	"github.com/podlife/podlife/agent/node"
	"github.com/podlife/podlife/agent/server"
	"github.com/podlife/podlife/cri/logs"
	"github.com/podlife/podlife/cri/stats"
)

// The kubelet API (agent/kubeletserver) on Config.Port: the root builds
// its authentication from the configuration and answers its Host through
// kubeletHost.

// listenKubeletAPI opens the kubelet API, unless Port is 0 or, standalone,
// the configuration does not say how to authenticate and authorize
// (logged: the server stays off rather than open to anyone).
func (a *Agent) listenKubeletAPI(opts Options, stats kubeletserver.StatsProvider) error {
	cfg := a.cfg
	if cfg.Port == 0 {
		return nil
	}
	authCfg := kubeletserver.AuthConfig{ClientCAFile: cfg.ClientCAFile, Anonymous: cfg.AnonymousAuth, Mode: cfg.AuthorizationMode}
	addresses := []v1.NodeAddress{{Type: v1.NodeHostName, Address: cfg.NodeName}}
	if a.cluster != nil {
		authCfg.Client = a.cluster.reviews
		addresses = a.cluster.node.Addresses()
	} else if err := authCfg.Validate(); err != nil {
		a.log.Info("kubelet API off: "+err.Error(), "port", cfg.Port)
		return nil
	} else if host, err := node.HostAddresses(cfg.NodeName); err == nil {
		addresses = host
	}
	auth, err := kubeletserver.BuildAuth(authCfg)
	if err != nil {
		return err
	}
	certDir := cfg.ResolvedCertDir()
	getCertificate := opts.ServingCertificate
	if a.cluster != nil && a.cluster.serving != nil { // RotateServerCertificates
		getCertificate = a.cluster.serving.GetCertificate
	}
	tlsCfg := kubeletserver.TLSConfig{
		GetCertificate: getCertificate, CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSPrivateKeyFile,
		CertDir: certDir, Host: cfg.NodeName,
	}
	for _, addr := range addresses {
		if ip := net.ParseIP(addr.Address); ip != nil {
			tlsCfg.IPs = append(tlsCfg.IPs, ip)
		} else if addr.Address != cfg.NodeName {
			tlsCfg.DNSNames = append(tlsCfg.DNSNames, addr.Address)
		}
	}
	a.kubeletAPI, err = kubeletserver.Listen(kubeletHost{a}, kubeletserver.Config{
		Address: cfg.ServingIP(), Port: cfg.Port, NodeName: cfg.NodeName, TLS: tlsCfg, Auth: auth,
		Stats: stats, Logger: a.log, Clock: a.clock, MaxOpenConnections: cfg.MaxOpenConnections,
		Configz: kubeletconfig.FromAgent(&cfg),
	})
	return err
}

// statsProvider is Options.Stats, or else the runtime's stats and the
// node's /proc, read through the CRI calls' read lane (cri/stats), which
// the kubelet API and the read-only port serve.
func (a *Agent) statsProvider(opts Options) (kubeletserver.StatsProvider, error) {
	if opts.Stats != nil {
		return opts.Stats, nil
	}
	return stats.New(stats.Config{Runtime: a.conn.runtime, Images: a.conn.images, NodeName: a.cfg.NodeName, RootDir: a.cfg.RootDir})
}

// KubeletAPIAddr is the address the kubelet API listens on, "" when it is
// off.
func (a *Agent) KubeletAPIAddr() string {
	if a.kubeletAPI == nil {
		return ""
	}
	return a.kubeletAPI.Addr()
}

// kubeletHost is the agent as the kubelet API's host.
type kubeletHost struct{ a *Agent }

func (h kubeletHost) HealthProblem() string              { return h.a.HealthProblem() }
func (h kubeletHost) PodList() *v1.PodList               { return h.a.PodList() }
func (h kubeletHost) Registry() *prometheus.Registry     { return h.a.registry }
func (h kubeletHost) ProbeMetrics() *prometheus.Registry { return h.a.probeMetrics }

func (h kubeletHost) ContainerLog(ctx context.Context, namespace, name, container string, previous bool) (*logs.ContainerLog, error) {
	return h.a.ContainerLog(ctx, namespace, name, container, previous)
}

func (h kubeletHost) Exec(ctx context.Context, ref kubeletserver.PodRef, container string, cmd []string, o kubeletserver.StreamOptions) (string, error) {
	pod, err := h.a.admittedPod(ref)
	if err != nil {
		return "", err
	}
	return h.a.syncer.Exec(ctx, pod, container, &runtimeapi.ExecRequest{Cmd: cmd, Tty: o.TTY, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr})
}

func (h kubeletHost) Attach(ctx context.Context, ref kubeletserver.PodRef, container string, o kubeletserver.StreamOptions) (string, error) {
	pod, err := h.a.admittedPod(ref)
	if err != nil {
		return "", err
	}
	return h.a.syncer.Attach(ctx, pod, container, &runtimeapi.AttachRequest{Tty: o.TTY, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr})
}

func (h kubeletHost) PortForward(ctx context.Context, ref kubeletserver.PodRef, ports []int32) (string, error) {
	pod, err := h.a.admittedPod(ref)
	if err != nil {
		return "", err
	}
	return h.a.syncer.PortForward(ctx, pod, ports)
}

func (h kubeletHost) Run(ctx context.Context, ref kubeletserver.PodRef, container string, cmd []string) ([]byte, error) {
	pod, err := h.a.admittedPod(ref)
	if err != nil {
		return nil, err
	}
	return h.a.syncer.RunInContainer(ctx, pod, container, cmd)
}

// admittedPod is the admitted pod of ref (of two of that name, the first
// by UID), or a NotFound error.
func (a *Agent) admittedPod(ref kubeletserver.PodRef) (*v1.Pod, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var pods []*v1.Pod
	for _, e := range a.pods {
		p := e.pod
		if e.rejection == nil && p.Namespace == ref.Namespace && p.Name == ref.Name && (ref.UID == "" || p.UID == ref.UID) {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		return nil, server.NotFound(fmt.Sprintf("pod %s/%s is not one of this node's admitted pods", ref.Namespace, ref.Name))
	}
	slices.SortFunc(pods, func(x, y *v1.Pod) int { return strings.Compare(string(x.UID), string(y.UID)) })
	return pods[0], nil
}
