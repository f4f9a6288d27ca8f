package podfiles

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
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
// the pod's hostname (and, with a domain, its FQDN first), then the pod's
// hostAliases, one line per IP.
func hostsFileContent(pod *v1.Pod, podIPs []string) ([]byte, error) {
	name, domain, err := HostnameAndDomain(pod)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("# Kubernetes-managed hosts file.\n")
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	for _, ip := range podIPs {
		if domain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, name, domain, name)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, name)
		}
	}
	writeHostAliases(&b, pod.Spec.HostAliases)
	return b.Bytes(), nil
}

// nodeHostsFileContent is the kubelet's hosts file for a pod on the node's
// network (nodeHostsFileContent): the node's own hosts file, read from
// nodeHosts, under a header, then the pod's hostAliases.
func nodeHostsFileContent(nodeHosts string, pod *v1.Pod) ([]byte, error) {
	node, err := os.ReadFile(nodeHosts)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("# Kubernetes-managed hosts file (host network).\n")
	b.Write(node)
	writeHostAliases(&b, pod.Spec.HostAliases)
	return b.Bytes(), nil
}

// writeHostAliases writes the kubelet's hostAliases section: one line per
// IP with all its names.
func writeHostAliases(b *bytes.Buffer, aliases []v1.HostAlias) {
	if len(aliases) == 0 {
		return
	}
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
}

// nodeHostsPath is the node's hosts file, which a pod on the node's
// network sees with its hostAliases.
const nodeHostsPath = "/etc/hosts"

// HostsMount writes the pod's hosts file into its directory under podsRoot
// and returns its mount at /etc/hosts, read-write as the kubelet mounts it:
// for a pod on the node's network the node's hosts file with the pod's
// hostAliases, else the managed file for the pod's IPs.
func HostsMount(podsRoot string, pod *v1.Pod, ips []string) (*runtimeapi.Mount, error) {
	return hostsMount(podsRoot, nodeHostsPath, pod, ips)
}

func hostsMount(podsRoot, nodeHosts string, pod *v1.Pod, ips []string) (*runtimeapi.Mount, error) {
	dir, err := cri.PodDir(podsRoot, pod)
	if err != nil {
		return nil, err
	}
	var content []byte
	if pod.Spec.HostNetwork {
		content, err = nodeHostsFileContent(nodeHosts, pod)
	} else {
		content, err = hostsFileContent(pod, ips)
	}
	path := filepath.Join(dir, hostsFileName)
	if err == nil {
		err = writeIfChanged(path, content)
	}
	if err != nil {
		return nil, fmt.Errorf("hosts file of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return &runtimeapi.Mount{ContainerPath: EtcHostsPath, HostPath: path}, nil
}

// writeIfChanged makes the file at path (mode 0644, its directory made)
// hold exactly content. The file is mounted read-write into the pod's
// containers, so anything may be in it: it is never read back whole (a
// container appending gigabytes to its /etc/hosts must not make the agent
// read them). Only when its size is content's is it compared, by a read of
// that many bytes; else it is rewritten, as the kubelet rewrites it before
// every container creation. The comparison is kept because the pod's
// running containers have the file itself bind-mounted: a rewrite in place
// (a rename would leave them the old file) truncates it first, and a
// sibling container resolving a name meanwhile would find no entries;
// skipping an unneeded rewrite avoids that on every restart of a
// crash-looping container. The file is opened once, without following a
// symbolic link, and must be a regular file: root writes it.
func writeIfChanged(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return err
	}
	err = rewriteUnlessHolds(f, content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// rewriteUnlessHolds makes f hold content, reading at most len(content)
// bytes of it.
func rewriteUnlessHolds(f *os.File, content []byte) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (mode %s)", f.Name(), fi.Mode())
	}
	if fi.Size() == int64(len(content)) && fi.Mode().Perm() == 0o644 {
		old := make([]byte, len(content))
		if _, err := f.ReadAt(old, 0); err == nil && bytes.Equal(old, content) {
			return nil
		}
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(content, 0); err != nil {
		return err
	}
	// As the kubelet: the mode whatever the umask, or a container's chmod.
	return f.Chmod(0o644)
}

// HostnameAndDomain are the pod's hostname and DNS domain, as the
// kubelet's GeneratePodHostNameAndDomain makes them: spec.hostnameOverride
// alone when set (no domain: it names the pod, not its DNS record), else
// spec.hostname or the pod's name with, under a subdomain,
// <subdomain>.<namespace>.svc.<cluster domain>. The hostname is cut to a
// DNS label's 63 characters. A value the API server would have refused is
// an error, as in the kubelet (a static pod is not validated by it).
func HostnameAndDomain(pod *v1.Pod) (hostname, domain string, err error) {
	if o := pod.Spec.HostnameOverride; o != nil {
		if msgs := validation.IsDNS1123Subdomain(*o); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod HostnameOverride %q is not a valid DNS subdomain: %s", *o, strings.Join(msgs, ";"))
		}
		return truncateHostname(*o), "", nil
	}
	hostname = pod.Name
	if h := pod.Spec.Hostname; h != "" {
		if msgs := validation.IsDNS1123Label(h); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod Hostname %q is not a valid DNS label: %s", h, strings.Join(msgs, ";"))
		}
		hostname = h
	}
	if sub := pod.Spec.Subdomain; sub != "" {
		if msgs := validation.IsDNS1123Label(sub); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod Subdomain %q is not a valid DNS label: %s", sub, strings.Join(msgs, ";"))
		}
		domain = fmt.Sprintf("%s.%s.svc.%s", sub, pod.Namespace, clusterDomain)
	}
	return truncateHostname(hostname), domain, nil
}

// KernelHostname is the sandbox's hostname (the kernel's nodename): the
// pod's hostname, or with setHostnameAsFQDN and a domain its FQDN, which
// must fit the kernel's 64 characters (the kubelet's
// GetNodenameForKernel).
func KernelHostname(pod *v1.Pod) (string, error) {
	hostname, domain, err := HostnameAndDomain(pod)
	if err != nil {
		return "", err
	}
	if fqdn := pod.Spec.SetHostnameAsFQDN; domain == "" || fqdn == nil || !*fqdn {
		return hostname, nil
	}
	const fqdnMaxLen = 64
	fqdn := hostname + "." + domain
	if len(fqdn) > fqdnMaxLen {
		return "", fmt.Errorf("failed to construct FQDN from pod hostname and cluster domain, FQDN %s is too long (%d characters is the max, %d characters requested)", fqdn, fqdnMaxLen, len(fqdn))
	}
	return fqdn, nil
}

// truncateHostname cuts h to a DNS label's 63 characters, without the '-'
// or '.' the cut may leave at its end (the kubelet's
// truncatePodHostnameIfNeeded).
func truncateHostname(h string) string {
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
}
