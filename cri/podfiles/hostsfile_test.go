package podfiles

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kubelet's managed hosts file: its fixed lines, then each pod IP with
// the hostname (the FQDN first with a subdomain), then the host aliases.
func TestHostsFileContent(t *testing.T) {
	const fixed = "# Kubernetes-managed hosts file.\n" +
		"127.0.0.1\tlocalhost\n" +
		"::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\n" +
		"fe00::0\tip6-mcastprefix\n" +
		"fe00::1\tip6-allnodes\n" +
		"fe00::2\tip6-allrouters\n"
	for _, tc := range []struct {
		name string
		spec v1.PodSpec
		ips  []string
		want string
	}{
		{"the pod name", v1.PodSpec{}, []string{"10.0.0.5"}, fixed + "10.0.0.5\tweb\n"},
		{"spec.hostname", v1.PodSpec{Hostname: "front"}, []string{"10.0.0.5"}, fixed + "10.0.0.5\tfront\n"},
		{"dual stack", v1.PodSpec{}, []string{"10.0.0.5", "fd00::5"}, fixed + "10.0.0.5\tweb\nfd00::5\tweb\n"},
		{"subdomain", v1.PodSpec{Hostname: "db-0", Subdomain: "db"}, []string{"10.0.0.5"},
			fixed + "10.0.0.5\tdb-0.db.prod.svc.cluster.local\tdb-0\n"},
		{"host aliases", v1.PodSpec{HostAliases: []v1.HostAlias{
			{IP: "127.0.0.1", Hostnames: []string{"foo.local", "bar.local"}},
			{IP: "10.1.2.3", Hostnames: []string{"foo.remote"}},
		}}, []string{"10.0.0.5"}, fixed + "10.0.0.5\tweb\n\n# Entries added by HostAliases.\n" +
			"127.0.0.1\tfoo.local\tbar.local\n10.1.2.3\tfoo.remote\n"},
		{"no IP", v1.PodSpec{}, nil, fixed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod"}, Spec: tc.spec}
			if got := string(hostsFileContent(pod, tc.ips)); got != tc.want {
				t.Errorf("hosts file:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// A hostname longer than a DNS label is cut to 63 characters, as the
// sandbox's hostname is.
func TestHostsFileLongName(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 70), Namespace: "ns"}}
	if got, want := string(hostsFileContent(pod, []string{"10.0.0.5"})), "10.0.0.5\t"+strings.Repeat("a", 63)+"\n"; !strings.HasSuffix(got, want) {
		t.Errorf("hosts file:\n%s\nwant it to end with %q", got, want)
	}
}
