package podfiles

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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
		{"hostnameOverride: the name, no domain", v1.PodSpec{Hostname: "db-0", Subdomain: "db", HostnameOverride: ptr.To("override.example.host")},
			[]string{"10.0.0.5"}, fixed + "10.0.0.5\toverride.example.host\n"},
		{"setHostnameAsFQDN changes no line", v1.PodSpec{Hostname: "db-0", Subdomain: "db", SetHostnameAsFQDN: ptr.To(true)}, []string{"10.0.0.5"},
			fixed + "10.0.0.5\tdb-0.db.prod.svc.cluster.local\tdb-0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod"}, Spec: tc.spec}
			got, err := hostsFileContent(pod, tc.ips)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("hosts file:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// A pod on the node's network sees the node's hosts file under the
// kubelet's header, with its hostAliases after it.
func TestNodeHostsFileContent(t *testing.T) {
	node := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(node, []byte("127.0.0.1\tlocalhost\n10.0.0.1\tnode-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const header = "# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n10.0.0.1\tnode-1\n"
	for _, tc := range []struct {
		name    string
		aliases []v1.HostAlias
		want    string
	}{
		{"no aliases", nil, header},
		{"aliases", []v1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}},
			header + "\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", UID: "u"}, Spec: v1.PodSpec{HostNetwork: true, HostAliases: tc.aliases}}
			root := t.TempDir()
			m, err := hostsMount(root, node, pod, []string{"10.0.0.1"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(m.HostPath)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want || m.ContainerPath != EtcHostsPath {
				t.Errorf("mount at %s, hosts file:\n%s\nwant:\n%s", m.ContainerPath, got, tc.want)
			}
		})
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", UID: "u"}, Spec: v1.PodSpec{HostNetwork: true}}
	if _, err := hostsMount(t.TempDir(), filepath.Join(t.TempDir(), "none"), pod, nil); err == nil {
		t.Error("a missing node hosts file gave no error")
	}
}

// The kernel hostname and the hosts file's names, as the kubelet's
// GeneratePodHostNameAndDomain and GetNodenameForKernel make them.
func TestKernelHostname(t *testing.T) {
	long := strings.Repeat("h", 50)
	for _, tc := range []struct {
		name    string
		spec    v1.PodSpec
		want    string
		wantErr string
	}{
		{name: "the pod name", want: "web"},
		{name: "spec.hostname", spec: v1.PodSpec{Hostname: "front"}, want: "front"},
		{name: "a subdomain alone changes nothing", spec: v1.PodSpec{Subdomain: "db"}, want: "web"},
		{name: "setHostnameAsFQDN", spec: v1.PodSpec{Hostname: "db-0", Subdomain: "db", SetHostnameAsFQDN: ptr.To(true)},
			want: "db-0.db.prod.svc.cluster.local"},
		{name: "setHostnameAsFQDN without a subdomain", spec: v1.PodSpec{SetHostnameAsFQDN: ptr.To(true)}, want: "web"},
		{name: "an FQDN over 64 characters", spec: v1.PodSpec{Hostname: long, Subdomain: "db", SetHostnameAsFQDN: ptr.To(true)},
			wantErr: "is too long (64 characters is the max"},
		{name: "hostnameOverride wins over hostname and subdomain", spec: v1.PodSpec{Hostname: "custom-host", Subdomain: "db", HostnameOverride: ptr.To("override-host")},
			want: "override-host"},
		{name: "hostnameOverride may hold dots", spec: v1.PodSpec{HostnameOverride: ptr.To("override.example.host")}, want: "override.example.host"},
		{name: "hostnameOverride cut to 63", spec: v1.PodSpec{HostnameOverride: ptr.To(strings.Repeat("o", 62) + ".x")}, want: strings.Repeat("o", 62)},
		{name: "an invalid hostnameOverride", spec: v1.PodSpec{HostnameOverride: ptr.To("Not-RFC1123")}, wantErr: `pod HostnameOverride "Not-RFC1123" is not a valid DNS subdomain`},
		{name: "an invalid hostname", spec: v1.PodSpec{Hostname: "a.b"}, wantErr: `pod Hostname "a.b" is not a valid DNS label`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod"}, Spec: tc.spec}
			got, err := KernelHostname(pod)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("KernelHostname = %q, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("KernelHostname = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// A hostname longer than a DNS label is cut to 63 characters, as the
// sandbox's hostname is.
func TestHostsFileLongName(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 70), Namespace: "ns"}}
	content, err := hostsFileContent(pod, []string{"10.0.0.5"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(content), "10.0.0.5\t"+strings.Repeat("a", 63)+"\n"; !strings.HasSuffix(got, want) {
		t.Errorf("hosts file:\n%s\nwant it to end with %q", got, want)
	}
}

// allocatedBy is how many bytes of the heap f allocates (all goroutines'
// allocations meanwhile count too: a bound on it is an upper bound).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The pod's hosts file is written, never read back whole: a container may
// append anything to it (it is mounted read-write), and whatever is there,
// the next write reads at most the managed content's length and leaves
// exactly that content, mode 0644. A file already holding it is left
// alone (its sibling containers read it meanwhile). A link or a FIFO
// planted in its place is refused, without following or blocking.
func TestWriteIfChanged(t *testing.T) {
	const content = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n10.0.0.5\tweb\n"
	const huge = 64 << 20
	old := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		prepare   func(t *testing.T, path string)
		untouched bool   // the file keeps its modification time
		wantErr   string // the file is refused
	}{
		{name: "absent", prepare: func(*testing.T, string) {}},
		{name: "the content already", prepare: func(t *testing.T, path string) { writeFile(t, path, content, 0o644) }, untouched: true},
		{name: "the same size, other bytes", prepare: func(t *testing.T, path string) {
			writeFile(t, path, strings.Replace(content, "web", "bad", 1), 0o644)
		}},
		{name: "appended 64 MiB", prepare: func(t *testing.T, path string) {
			writeFile(t, path, content, 0o644)
			if err := os.Truncate(path, huge); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "cut short", prepare: func(t *testing.T, path string) { writeFile(t, path, content[:10], 0o644) }},
		{name: "mode changed by a container", prepare: func(t *testing.T, path string) { writeFile(t, path, content, 0o600) }},
		{name: "a symbolic link", prepare: func(t *testing.T, path string) {
			if err := os.Symlink(filepath.Join(filepath.Dir(path), "target"), path); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "too many levels of symbolic links"},
		{name: "a FIFO", prepare: func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "is not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pod", hostsFileName)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			tc.prepare(t, path)
			_ = os.Chtimes(path, old, old)
			var err error
			alloc := allocatedBy(func() { err = writeIfChanged(path, []byte(content)) })
			t.Logf("writeIfChanged allocated %d bytes", alloc)
			if alloc >= 1<<20 {
				t.Errorf("writeIfChanged allocated %d bytes, want < 1 MiB: it read the file back", alloc)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("writeIfChanged: %v, want an error with %q", err, tc.wantErr)
				}
				if _, err := os.Lstat(filepath.Join(filepath.Dir(path), "target")); err == nil {
					t.Error("the link was followed: its target was created")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != content || fi.Mode().Perm() != 0o644 {
				t.Errorf("hosts file: %d bytes, mode %s, %v; want the content, mode 0644", len(got), fi.Mode(), err)
			}
			if touched := !fi.ModTime().Equal(old); touched == tc.untouched {
				t.Errorf("hosts file modified at %s: untouched should be %v", fi.ModTime(), tc.untouched)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
