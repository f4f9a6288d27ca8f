package dns

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// kubeadms is the cluster DNS kubeadm configures.
var kubeadms = Cluster{Servers: []string{"10.96.0.10"}, Domain: "cluster.local"}

func TestConfig(t *testing.T) {
	tests := []struct {
		name                       string
		policy                     v1.DNSPolicy
		hostNetwork                bool
		dnsConfig                  *v1.PodDNSConfig
		cluster                    Cluster
		servers, searches, options []string
		warnings                   []string
	}{
		{name: "ClusterFirst without cluster DNS: the node's, and a warning", policy: v1.DNSClusterFirst,
			servers: []string{"10.0.0.10", "10.0.0.11"}, searches: []string{"corp.example", "lab.example"}, options: []string{"ndots:3", "rotate", "timeout:1"},
			warnings: []string{"MissingClusterDNS"}},
		{name: "ClusterFirst: the cluster's", policy: v1.DNSClusterFirst, cluster: kubeadms,
			servers: []string{"10.96.0.10"}, searches: []string{"web.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "lab.example"}, options: []string{"ndots:5"}},
		{name: "ClusterFirst without a domain: the node's searches", policy: v1.DNSClusterFirst, cluster: Cluster{Servers: []string{"10.96.0.10"}},
			servers: []string{"10.96.0.10"}, searches: []string{"corp.example", "lab.example"}, options: []string{"ndots:5"}},
		{name: "ClusterFirst on the host network: the node's", policy: v1.DNSClusterFirst, hostNetwork: true, cluster: kubeadms,
			servers: []string{"10.0.0.10", "10.0.0.11"}, searches: []string{"corp.example", "lab.example"}, options: []string{"ndots:3", "rotate", "timeout:1"}},
		{name: "ClusterFirstWithHostNet: the cluster's", policy: v1.DNSClusterFirstWithHostNet, hostNetwork: true, cluster: kubeadms,
			servers: []string{"10.96.0.10"}, searches: []string{"web.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "lab.example"}, options: []string{"ndots:5"}},
		{name: "Default with cluster DNS: the node's", policy: v1.DNSDefault, cluster: kubeadms,
			servers: []string{"10.0.0.10", "10.0.0.11"}, searches: []string{"corp.example", "lab.example"}, options: []string{"ndots:3", "rotate", "timeout:1"}},
		{name: "ClusterFirst with a dnsConfig", policy: v1.DNSClusterFirst, cluster: kubeadms, dnsConfig: &v1.PodDNSConfig{
			Nameservers: []string{"1.1.1.1"}, Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}}},
			servers: []string{"10.96.0.10", "1.1.1.1"}, searches: []string{"web.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "lab.example"}, options: []string{"ndots:2"}},
		{name: "Default", policy: v1.DNSDefault,
			servers: []string{"10.0.0.10", "10.0.0.11"}, searches: []string{"corp.example", "lab.example"}, options: []string{"ndots:3", "rotate", "timeout:1"}},
		{name: "ClusterFirstWithHostNet without cluster DNS", policy: v1.DNSClusterFirstWithHostNet, hostNetwork: true,
			servers: []string{"10.0.0.10", "10.0.0.11"}, searches: []string{"corp.example", "lab.example"}, options: []string{"ndots:3", "rotate", "timeout:1"},
			warnings: []string{"MissingClusterDNS"}},
		{name: "None: the pod's only", policy: v1.DNSNone, dnsConfig: &v1.PodDNSConfig{
			Nameservers: []string{"1.1.1.1"}, Searches: []string{"my.dns.search.suffix"}, Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "edns0"}}},
			servers: []string{"1.1.1.1"}, searches: []string{"my.dns.search.suffix"}, options: []string{"edns0", "ndots:2"}},
		{name: "dnsConfig merged, duplicates dropped, the pod's options win", policy: v1.DNSDefault, dnsConfig: &v1.PodDNSConfig{
			Nameservers: []string{"10.0.0.11", "1.1.1.1"}, Searches: []string{"lab.example", "pod.example"},
			Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("5")}, {Name: "timeout", Value: ptr.To("")}}},
			servers: []string{"10.0.0.10", "10.0.0.11", "1.1.1.1"}, searches: []string{"corp.example", "lab.example", "pod.example"},
			options: []string{"ndots:5", "rotate", "timeout"}},
		{name: "over three nameservers", policy: v1.DNSDefault, dnsConfig: &v1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "8.8.8.8"}},
			servers: []string{"10.0.0.10", "10.0.0.11", "1.1.1.1"}, searches: []string{"corp.example", "lab.example"},
			options: []string{"ndots:3", "rotate", "timeout:1"}, warnings: []string{"DNSConfigForming"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "p"}, Spec: v1.PodSpec{DNSPolicy: tt.policy, HostNetwork: tt.hostNetwork, DNSConfig: tt.dnsConfig}}
			cfg, warnings, err := Config(pod, "testdata/resolv.conf", tt.cluster)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.Servers, tt.servers) || !slices.Equal(cfg.Searches, tt.searches) || !slices.Equal(cfg.Options, tt.options) {
				t.Errorf("config %v %v %v, want %v %v %v", cfg.Servers, cfg.Searches, cfg.Options, tt.servers, tt.searches, tt.options)
			}
			var reasons []string
			for _, w := range warnings {
				reasons = append(reasons, w.Reason)
			}
			if !slices.Equal(reasons, tt.warnings) {
				t.Errorf("warnings %q, want reasons %q", warnings, tt.warnings)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{DNSPolicy: v1.DNSClusterFirst}}
	for _, path := range []string{"testdata/bad-resolv.conf", "testdata/none"} {
		if _, _, err := Config(pod, path, Cluster{}); err == nil {
			t.Errorf("%s: no error", path)
		}
	}
	// None reads nothing of the node.
	pod.Spec.DNSPolicy = v1.DNSNone
	if _, _, err := Config(pod, "testdata/none", Cluster{}); err != nil {
		t.Errorf("None read the node's file: %v", err)
	}
}

func TestFitSearches(t *testing.T) {
	long := strings.Repeat("a", 254)
	var many []string
	for i := range 40 {
		many = append(many, strings.Repeat("d", 60)+string(rune('a'+i%26)))
	}
	tests := []struct {
		name string
		in   []string
		want int // paths kept
		cut  bool
	}{
		{name: "fits", in: []string{"a.example", "b.example"}, want: 2},
		{name: "a path over 253 characters", in: []string{"a.example", long, "b.example"}, want: 2, cut: true},
		{name: "over 32 paths and 2048 characters", in: many, want: 32, cut: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := fitSearches(tt.in)
			if len(got) > tt.want || cut != tt.cut || len(strings.Join(got, " ")) > maxSearchListChars {
				t.Errorf("fitSearches kept %d (%d chars), cut %v; want at most %d, cut %v", len(got), len(strings.Join(got, " ")), cut, tt.want, tt.cut)
			}
		})
	}
}
