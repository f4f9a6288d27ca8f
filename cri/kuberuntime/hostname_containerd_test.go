package kuberuntime

// The hostname and /etc/hosts a container on a real containerd sees, as
// the conformance specs "Override hostname of Pod" and "Kubelet with pods
// in a privileged namespace ... hostAliases and hostNetwork" read them.
// They skip unless $PODLIFE_CRI_ENDPOINT names a runtime (internal/critest).

import (
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// hostnamePod runs a busybox that sleeps, with the pod's files under a
// pods root, and returns what the shell command script prints in it.
func hostnamePod(t *testing.T, edit func(*v1.Pod), script string) string {
	t.Helper()
	e, _ := newCtrdSyncerWith(t, Options{PodsRoot: t.TempDir()})
	pod := e.pod("hostname", 0, busybox("app", []string{"sleep", "3600"}))
	edit(pod)
	e.run(pod)
	p, err := readPod(t.Context(), e.rt, pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := e.rt.ExecSync(t.Context(), p.RunningIDs()[0], []string{"sh", "-c", script}, 10*time.Second)
	if err != nil {
		t.Fatalf("%s: %v (%s)", script, err, stderr)
	}
	return string(stdout)
}

func TestContainerdHostname(t *testing.T) {
	const script = `echo $(hostname)';'$(hostname -f)';'`
	for _, tc := range []struct {
		name string
		edit func(*v1.Pod)
		want string
	}{
		{"the pod's name", func(*v1.Pod) {}, "hostname;hostname;"},
		{"hostnameOverride wins over hostname", func(p *v1.Pod) {
			p.Spec.Hostname, p.Spec.HostnameOverride = "custom-host", new("override-host")
		}, "override-host;override-host;"},
		{"hostnameOverride with a subdomain", func(p *v1.Pod) {
			p.Spec.Subdomain, p.Spec.HostnameOverride = "t", new("override.example.host")
		}, "override.example.host;override.example.host;"},
		{"setHostnameAsFQDN", func(p *v1.Pod) {
			p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = "db-0", "db", new(true)
		}, "db-0.db.podlife-cri-it.svc.cluster.local;db-0.db.podlife-cri-it.svc.cluster.local;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hostnamePod(t, tc.edit, script); got != tc.want+"\n" {
				t.Errorf("hostname;hostname -f; = %q, want %q", got, tc.want)
			}
		})
	}
}

// A pod on the node's network has the node's hostname and the node's
// hosts file with its hostAliases.
func TestContainerdHostNetworkHostAliases(t *testing.T) {
	node, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	got := hostnamePod(t, func(p *v1.Pod) {
		p.Spec.HostNetwork = true
		p.Spec.HostAliases = []v1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}}
	}, "hostname; cat /etc/hosts")
	name, hosts, _ := strings.Cut(got, "\n")
	if name != node {
		t.Errorf("hostname %q, want the node's %q", name, node)
	}
	if !strings.HasPrefix(hosts, "# Kubernetes-managed hosts file (host network).\n") ||
		!strings.HasSuffix(hosts, "# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n") {
		t.Errorf("/etc/hosts:\n%s", hosts)
	}
}
