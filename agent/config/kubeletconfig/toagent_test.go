package kubeletconfig

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/podlife/podlife/agent/config"
)

// TestEveryKubeletFieldIsDecided: every leaf of KubeletConfiguration has
// an entry in fields (honoured, or refused with a reason), and no entry
// names a leaf the type does not have. A field added upstream fails here
// until it is decided.
func TestEveryKubeletFieldIsDecided(t *testing.T) {
	var paths []string
	for _, l := range leaves(reflect.ValueOf(&KubeletConfiguration{}).Elem(), "") {
		paths = append(paths, l.Path)
		fd, ok := fields[l.Path]
		switch {
		case !ok:
			t.Errorf("%s (%s): not decided: honour it or refuse it with a reason", l.Path, l.Value.Type())
		case fd.apply == nil && fd.why == "":
			t.Errorf("%s: refused without a reason", l.Path)
		case fd.apply != nil && (fd.why != "" || fd.same != nil):
			t.Errorf("%s: honoured, yet with a reason or a same-as-podlife value", l.Path)
		}
	}
	for p := range fields {
		if !slices.Contains(paths, p) {
			t.Errorf("fields names %s, which KubeletConfiguration does not have", p)
		}
	}
	t.Logf("%d leaves of KubeletConfiguration decided", len(paths))
}

// TestApplyFromAgentRoundTrips: a configuration read back from its own
// KubeletConfiguration (what /configz shows) is itself, for every field
// both have.
func TestApplyFromAgentRoundTrips(t *testing.T) {
	for _, tt := range agentRows {
		want := config.Default()
		if tt.edit != nil {
			tt.edit(&want)
		}
		// The deprecated forms of address and bindAddress read back as
		// the kubelet's address and readOnlyPort.
		if ro := want.ReadOnlyAddress(); ro != "" {
			_, port, _ := net.SplitHostPort(ro)
			want.ReadOnlyPort, _ = strconv.Atoi(port)
		}
		want.Address, want.BindAddress = want.ServingIP(), ""
		f := &File{Path: tt.name, k: *FromAgent(&want)}
		got := config.Default()
		got.Kubeconfig, got.BootstrapKubeconfig = want.Kubeconfig, want.BootstrapKubeconfig
		if err := f.Apply(&got); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if err := f.Merged(&got); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		// An unset serializeImagePulls reads back as the value it stands for.
		want.SerializeImagePulls = ptr.To(want.ParallelPulls() == 1)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read back as\n%+v\nwant\n%+v", tt.name, got, want)
		}
	}
}

func TestApplyRefusesWhatPodlifeDoesNotHonour(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // each refusal's start; none: accepted
	}{
		{"nothing set", "", nil},
		{"unset values written out", "evictionHard: {}\nclusterDNS: []\nmaxPods: 0\nimageMinimumGCAge: 0s\nlogging: {flushFrequency: 0, options: {json: {infoBufferSize: \"0\"}}}", nil},
		{"what podlife does anyway", "cgroupsPerQOS: false\nkubeAPIQPS: 50\ntlsMinVersion: VersionTLS12", nil},
		{"not podlife's value", "kubeAPIQPS: 20", []string{"kubeAPIQPS: not honoured: podlife's value is fixed at the kubelet's default (50)"}},
		{"not honoured", "cgroupDriver: systemd\nevictionHard: {memory.available: 100Mi}\nfeatureGates: {Foo: true}",
			[]string{"cgroupDriver: not honoured: podlife manages no cgroups",
				"evictionHard: not honoured: podlife does not evict", "featureGates: not honoured: podlife has no feature gates"}},
		{"a nested field", "authorization: {webhook: {cacheAuthorizedTTL: 5m}}", []string{"authorization.webhook.cacheAuthorizedTTL: not honoured"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+tt.yaml+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c := config.Default()
			err = f.Apply(&c)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want %q refused", tt.want)
			}
			lines := strings.Split(err.Error(), "\n")[1:]
			if len(lines) != len(tt.want) {
				t.Fatalf("refused %d fields, want %d:\n%v", len(lines), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("refusal %d is %q, want it to start %q", i, lines[i], w)
				}
			}
		})
	}
}

func TestReadFileRefusesUnknownFieldsAndKinds(t *testing.T) {
	for name, body := range map[string]string{
		"unknown field": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPodz: 3\n",
		"other kind":    "apiVersion: podlife.io/v1alpha1\nkind: KubeletConfiguration\n",
	} {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestMergedChecksWhatDependsOnFlags: the fields whose meaning depends on
// --kubeconfig and --bootstrap-kubeconfig, which kubeadm passes as flags.
func TestMergedChecksWhatDependsOnFlags(t *testing.T) {
	tests := []struct {
		name, yaml, kubeconfig, bootstrap, want string
	}{
		{"kubeadm's join", "rotateCertificates: true\nauthentication: {webhook: {enabled: true}}", "kubelet.conf", "bootstrap-kubelet.conf", ""},
		{"rotation without a bootstrap", "rotateCertificates: true", "kubelet.conf", "", "rotateCertificates"},
		{"webhook standalone", "authentication: {webhook: {enabled: true}}", "", "", "authentication.webhook.enabled true"},
		{"no webhook in a cluster", "authentication: {webhook: {enabled: false}}", "kubelet.conf", "", "authentication.webhook.enabled false"},
		{"no registration in a cluster", "registerNode: false", "kubelet.conf", "", "registerNode false"},
	}
	for _, tt := range tests {
		var k KubeletConfiguration
		if err := yaml.UnmarshalStrict([]byte(tt.yaml), &k); err != nil {
			t.Fatal(err)
		}
		f := &File{Path: tt.name, k: k}
		c := config.Default()
		c.Kubeconfig, c.BootstrapKubeconfig = tt.kubeconfig, tt.bootstrap
		err := f.Merged(&c)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: got %v, want an error naming %q", tt.name, err, tt.want)
		}
	}
}

// TestKubeadmsConfig: the file kubeadm writes (testdata/kubeadm-config.yaml,
// printed by kubeadm itself) is read whole; podlife refuses exactly the
// fields it does not honour yet, by name, and nothing else: only
// cgroupDriver.
func TestKubeadmsConfig(t *testing.T) {
	f, err := ReadFile("testdata/kubeadm-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := config.Default()
	err = f.Apply(&c)
	var refused []string
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n")[1:] {
			name, _, _ := strings.Cut(line, ":")
			refused = append(refused, name)
		}
	}
	if want := []string{"cgroupDriver"}; !slices.Equal(refused, want) {
		t.Errorf("refused %q, want %q; the error:\n%v", refused, want, err)
	}
	if c.StaticPodPath != "/etc/kubernetes/manifests" || c.ClientCAFile != "/etc/kubernetes/pki/ca.crt" || c.HealthzPort != 10248 ||
		strings.Join(c.ClusterDNS, ",") != "10.96.0.10" || c.ClusterDomain != "cluster.local" {
		t.Errorf("staticPodPath %q clientCAFile %q healthzPort %d clusterDNS %q clusterDomain %q not read", c.StaticPodPath, c.ClientCAFile, c.HealthzPort, c.ClusterDNS, c.ClusterDomain)
	}
	// kubeadm-flags.env and the kubelet unit pass these.
	c.Kubeconfig, c.BootstrapKubeconfig = "/etc/kubernetes/kubelet.conf", "/etc/kubernetes/bootstrap-kubelet.conf"
	if err := f.Merged(&c); err != nil {
		t.Errorf("with kubeadm's flags: %v", err)
	}
}
