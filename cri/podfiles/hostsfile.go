package podfiles

import (
	"bytes"
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

// EtcHostsPath is where every container of a pod sees the pod's hosts file.
const EtcHostsPath = "/etc/hosts"

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
	name := Hostname(pod)
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

// HostsMount writes the pod's hosts file for its IPs into its directory
// under podsRoot and returns its mount at /etc/hosts, read-write as the
// kubelet mounts it.
func HostsMount(podsRoot string, pod *v1.Pod, ips []string) (*runtimeapi.Mount, error) {
	dir, err := cri.PodDir(podsRoot, pod)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, hostsFileName)
	if err := writeIfChanged(path, hostsFileContent(pod, ips)); err != nil {
		return nil, fmt.Errorf("hosts file of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return &runtimeapi.Mount{ContainerPath: EtcHostsPath, HostPath: path}, nil
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

// Hostname is the pod's hostname: spec.hostname or the name, cut to a DNS
// label's 63 characters, without the '-' or '.' the cut may leave at its
// end (the kubelet's truncatePodHostnameIfNeeded).
func Hostname(pod *v1.Pod) string {
	h := pod.Spec.Hostname
	if h == "" {
		h = pod.Name
	}
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
}
