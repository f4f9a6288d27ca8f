package kuberuntime

// The resolv.conf a container on a real containerd sees. It skips unless
// $PODLIFE_CRI_ENDPOINT names a runtime (internal/critest).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri/dns"
)

func TestContainerdResolvConf(t *testing.T) {
	node := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(node, []byte("nameserver 10.0.0.10\nsearch node.example\noptions ndots:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	two := "2"
	kubeadms := dns.Cluster{Servers: []string{"10.96.0.10"}, Domain: "cluster.local"}
	for _, tc := range []struct {
		name    string
		cluster dns.Cluster
		edit    func(*v1.Pod)
		want    []string // lines of /etc/resolv.conf, in order; NS is the pod's namespace
	}{
		{"the node's", dns.Cluster{}, func(*v1.Pod) {}, []string{"search node.example", "nameserver 10.0.0.10", "options ndots:2"}},
		{"the cluster's", kubeadms, func(*v1.Pod) {}, []string{"search NS.svc.cluster.local svc.cluster.local cluster.local node.example", "nameserver 10.96.0.10", "options ndots:5"}},
		{"Default with cluster DNS: the node's", kubeadms, func(p *v1.Pod) { p.Spec.DNSPolicy = v1.DNSDefault },
			[]string{"search node.example", "nameserver 10.0.0.10", "options ndots:2"}},
		{"None: the pod's only", dns.Cluster{}, func(p *v1.Pod) {
			p.Spec.DNSPolicy = v1.DNSNone
			p.Spec.DNSConfig = &v1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"pod.example"},
				Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: &two}, {Name: "edns0"}}}
		}, []string{"search pod.example", "nameserver 1.1.1.1", "options edns0 ndots:2"}},
		{"merged", dns.Cluster{}, func(p *v1.Pod) {
			p.Spec.DNSConfig = &v1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"pod.example"}}
		}, []string{"search node.example pod.example", "nameserver 10.0.0.10", "nameserver 1.1.1.1", "options ndots:2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newCtrdSyncerWith(t, Options{ResolvConf: node, ClusterDNS: tc.cluster})
			pod := e.pod("dns", 0, busybox("app", []string{"sleep", "3600"}))
			tc.edit(pod)
			e.run(pod)
			p, err := readPod(t.Context(), e.rt, pod.UID)
			if err != nil {
				t.Fatal(err)
			}
			out, stderr, err := e.rt.ExecSync(t.Context(), p.RunningIDs()[0], []string{"cat", "/etc/resolv.conf"}, ctrdTimeout)
			if err != nil {
				t.Fatalf("cat: %v (%s)", err, stderr)
			}
			want := strings.ReplaceAll(strings.Join(tc.want, "\n"), "NS.", pod.Namespace+".")
			if got := strings.TrimSpace(string(out)); got != want {
				t.Errorf("/etc/resolv.conf:\n%s\nwant:\n%s", out, want)
			}
		})
	}
}
