package kuberuntime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

// etcHostsPath is where every container of a pod sees the pod's hosts file.
const etcHostsPath = "/etc/hosts"

// hostsFileName is the pod's hosts file in its directory.
const hostsFileName = "etc-hosts"

// clusterDomain is the DNS domain of the pod's subdomain FQDN: the
// kubelet's --cluster-domain as clusters set it.
const clusterDomain = "cluster.local"

// hostsFileContent is the kubelet's managed hosts file for pod
// (managedHostsFileContent): the localhost and IPv6 lines, each pod IP with
// the pod's hostname (and, with spec.subdomain, its FQDN first), then the
// pod's hostAliases, one line per IP.
func hostsFileContent(pod *v1.Pod, podIPs []string) []byte {
	var b bytes.Buffer
	b.WriteString("# Kubernetes-managed hosts file.\n")
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	name := hostname(pod)
	for _, ip := range podIPs {
		if sub := pod.Spec.Subdomain; sub != "" {
			fmt.Fprintf(&b, "%s\t%s.%s.%s.svc.%s\t%s\n", ip, name, sub, pod.Namespace, clusterDomain, name)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, name)
		}
	}
	if len(pod.Spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range pod.Spec.HostAliases {
			fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	return b.Bytes()
}

// hostsMount writes the pod's hosts file for the sandbox's IPs and returns
// its mount at /etc/hosts, read-write as the kubelet mounts it; nil for a
// pod on the host network (its containers see the node's names, as the
// runtime gives them) and for a sandbox without an IP (nothing to write:
// the kubelet mounts none either).
func (s *Syncer) hostsMount(ctx context.Context, ps *podSync) (*runtimeapi.Mount, error) {
	if ps.pod.Spec.HostNetwork {
		return nil, nil
	}
	ips, err := ps.sandboxIPs(ctx, s.rt)
	if err != nil || len(ips) == 0 {
		return nil, err
	}
	dir, err := podDir(s.opts.PodsRoot, ps.pod)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, hostsFileName)
	if err := writeIfChanged(path, hostsFileContent(ps.pod, ips)); err != nil {
		return nil, fmt.Errorf("hosts file of pod %s/%s: %w", ps.pod.Namespace, ps.pod.Name, err)
	}
	return &runtimeapi.Mount{ContainerPath: etcHostsPath, HostPath: path}, nil
}

// writeIfChanged writes content to path (mode 0644, its directory made)
// unless it holds that already. It writes in place, not by a rename: the
// running containers of the pod have the file itself bind-mounted, and a
// rewrite they could catch half done is avoided when nothing changed.
func writeIfChanged(path string, content []byte) error {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, content) {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, content, 0o644)
}

// sandboxIPs are the IPs of the pod's sandbox, asked of the runtime once
// per sync.
func (ps *podSync) sandboxIPs(ctx context.Context, rt cri.Runtime) ([]string, error) {
	if ps.ips != nil {
		return ps.ips, nil
	}
	resp, err := rt.PodSandboxStatus(ctx, ps.sbID, false)
	if err != nil {
		return nil, fmt.Errorf("status of sandbox %s of pod %s/%s: %w", ps.sbID, ps.pod.Namespace, ps.pod.Name, err)
	}
	ps.ips = []string{}
	if n := resp.GetStatus().GetNetwork(); n.GetIp() != "" {
		ps.ips = append(ps.ips, n.GetIp())
		for _, ip := range n.GetAdditionalIps() {
			ps.ips = append(ps.ips, ip.GetIp())
		}
	}
	return ps.ips, nil
}
