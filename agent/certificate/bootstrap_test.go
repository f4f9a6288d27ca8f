package certificate

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/certificate"

	"github.com/podlife/podlife/internal/testlog"
)

func TestBootstrap(t *testing.T) {
	const node = "node-a"
	ca := newTestCA(t)
	now := time.Now()
	// setups prepare the kubeconfig and the cert directory; they return the
	// kubeconfig's content when it must be left alone.
	type setup func(t *testing.T, kubeconfig, certDir string) (keep []byte)
	writeKubeconfigWith := func(notBefore, notAfter time.Time) setup {
		return func(t *testing.T, kubeconfig, _ string) []byte {
			certPEM, keyPEM := ca.keyPair(t, ClientSubject(node), notBefore, notAfter)
			written := writeNodeKubeconfig(t, filepath.Dir(kubeconfig), certPEM, keyPEM)
			if err := os.Rename(written, kubeconfig); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(kubeconfig)
			return data
		}
	}
	for _, tc := range []struct {
		name      string
		setup     setup
		bootstrap string // the bootstrap kubeconfig; "" the fixture
		outcome   outcome
		timeout   time.Duration
		wantCSR   bool
		wantErr   []string // parts of the error; nil: success
		keeps     bool     // the kubeconfig is left as it was
	}{
		{name: "no kubeconfig: a CSR is issued", outcome: issue, wantCSR: true},
		{
			name: "expired client certificate: a CSR is issued", outcome: issue, wantCSR: true,
			setup: func(t *testing.T, kubeconfig, certDir string) []byte {
				writeKubeconfigWith(now.Add(-2*time.Hour), now.Add(-time.Hour))(t, kubeconfig, certDir)
				return nil
			},
		},
		{
			name: "unreadable kubeconfig: replaced after a CSR", outcome: issue, wantCSR: true,
			setup: func(t *testing.T, kubeconfig, _ string) []byte {
				if err := os.WriteFile(kubeconfig, []byte("clusters: [oops"), 0o600); err != nil {
					t.Fatal(err)
				}
				return nil
			},
		},
		{
			name: "valid kubeconfig: no CSR, the bootstrap kubeconfig is not even read", outcome: issue,
			bootstrap: "testdata/malformed.kubeconfig", keeps: true,
			setup: writeKubeconfigWith(now.Add(-time.Minute), now.Add(time.Hour)),
		},
		{
			name: "valid certificate in the cert directory: no CSR, the kubeconfig points at it", outcome: issue,
			setup: func(t *testing.T, _, certDir string) []byte {
				certPEM, keyPEM := ca.keyPair(t, ClientSubject(node), now.Add(-time.Minute), now.Add(time.Hour))
				store, err := certificate.NewFileStore(clientPairPrefix, certDir, certDir, "", "")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := store.Update(certPEM, keyPEM); err != nil {
					t.Fatal(err)
				}
				return nil
			},
		},
		{
			name: "denied", outcome: deny, wantCSR: true,
			wantErr: []string{"testdata/bootstrap.kubeconfig", "denied", "NotANode", "denied by the test"},
		},
		{
			name: "never approved", outcome: pending, wantCSR: true, timeout: 300 * time.Millisecond,
			wantErr: []string{"was not approved and signed within 300ms", "csrapproving"},
		},
		{
			name: "malformed bootstrap kubeconfig", bootstrap: "testdata/malformed.kubeconfig",
			wantErr: []string{"bootstrap kubeconfig testdata/malformed.kubeconfig"},
		},
		{
			name: "missing bootstrap kubeconfig", bootstrap: "testdata/missing.kubeconfig",
			wantErr: []string{"bootstrap kubeconfig testdata/missing.kubeconfig", "no such file"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			certDir, err := PrepareCertDir(filepath.Join(dir, "pki"))
			if err != nil {
				t.Fatal(err)
			}
			kubeconfig := filepath.Join(dir, "kubelet.kubeconfig")
			var kept []byte
			if tc.setup != nil {
				kept = tc.setup(t, kubeconfig, certDir)
			}
			bootstrap := tc.bootstrap
			if bootstrap == "" {
				bootstrap = bootstrapKubeconfig
			}
			cp := newFakeControlPlane(t, ca, tc.outcome)
			var configs []*rest.Config
			var mu sync.Mutex
			log, logs := testlog.New()
			err = Bootstrap(context.Background(), BootstrapConfig{
				Kubeconfig: kubeconfig, BootstrapKubeconfig: bootstrap, CertDir: certDir, NodeName: node,
				Logger: log, NewClient: cp.newClientFunc(&configs, &mu), ApprovalTimeout: tc.timeout,
			})
			if got := len(cp.requests()); got != map[bool]int{false: 0, true: 1}[tc.wantCSR] {
				t.Errorf("%d CSRs created, want CSR: %v", got, tc.wantCSR)
			}
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("no error; want one with %q", tc.wantErr)
				}
				for _, part := range tc.wantErr {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q does not say %q", err, part)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Bootstrap: %v\nlog:\n%s", err, logs.String())
			}
			if tc.keeps {
				if now, _ := os.ReadFile(kubeconfig); string(now) != string(kept) {
					t.Errorf("the valid kubeconfig was rewritten")
				}
				return
			}
			if tc.wantCSR {
				checkClientCSR(t, cp.requests()[0], node)
				if name := cp.requests()[0].Name; !strings.HasPrefix(name, "node-csr-") {
					t.Errorf("CSR name %q, want node-csr-<digest>", name)
				}
				if len(configs) != 1 || configs[0].BearerToken != "abcdef.0123456789abcdef" {
					t.Errorf("the CSR was not made with the bootstrap token's identity: configs %v", configs)
				}
			}
			checkBootstrapFiles(t, kubeconfig, certDir)
		})
	}
}

// checkClientCSR checks the bootstrap CSR is the kubelet's: its signer,
// usages, subject and an ECDSA P-256 key.
func checkClientCSR(t *testing.T, csr *certificatesv1.CertificateSigningRequest, node string) {
	t.Helper()
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		t.Errorf("signer %q, want %q", csr.Spec.SignerName, certificatesv1.KubeAPIServerClientKubeletSignerName)
	}
	wantUsages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	if !slices.Equal(csr.Spec.Usages, wantUsages) {
		t.Errorf("usages %v, want %v", csr.Spec.Usages, wantUsages)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil {
		t.Fatalf("the CSR's request is not PEM")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if req.Subject.CommonName != "system:node:"+node || !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("subject %v, want CN=system:node:%s O=system:nodes", req.Subject, node)
	}
	if key, ok := req.PublicKey.(*ecdsa.PublicKey); !ok || key.Curve != elliptic.P256() {
		t.Errorf("key %T, want ECDSA P-256", req.PublicKey)
	}
}

var timestamped = regexp.MustCompile(`^kubelet-client-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.pem$`)

// checkBootstrapFiles checks the files a bootstrap leaves: the cert
// directory 0700, kubelet-client-current.pem a link to a timestamped 0600
// file, no temporary key, and a 0600 kubeconfig that points at the
// current certificate, with the bootstrap's server and CA.
func checkBootstrapFiles(t *testing.T, kubeconfig, certDir string) {
	t.Helper()
	if fi, err := os.Stat(certDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("cert directory: %v, mode %v; want 0700", err, fi.Mode())
	}
	current := filepath.Join(certDir, "kubelet-client-current.pem")
	target, err := os.Readlink(current)
	if err != nil {
		t.Fatalf("kubelet-client-current.pem is no link: %v", err)
	}
	if !timestamped.MatchString(filepath.Base(target)) || filepath.Dir(target) != certDir {
		t.Errorf("kubelet-client-current.pem -> %s; want %s/kubelet-client-<time>.pem", target, certDir)
	}
	for _, f := range []string{target, kubeconfig} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", f, err, fi.Mode())
		}
	}
	if _, err := os.Stat(filepath.Join(certDir, "kubelet-client.key.tmp")); !os.IsNotExist(err) {
		t.Errorf("the temporary key is still there (%v)", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("the written kubeconfig: %v", err)
	}
	if cfg.CertFile != current || cfg.KeyFile != current || cfg.BearerToken != "" {
		t.Errorf("kubeconfig cert %q key %q token %q; want the cert and key %s and no token", cfg.CertFile, cfg.KeyFile, cfg.BearerToken, current)
	}
	abs, _ := filepath.Abs("testdata/ca.crt")
	if cfg.Host != "https://127.0.0.1:6443" || cfg.CAFile != abs {
		t.Errorf("kubeconfig server %q CA %q; want the bootstrap kubeconfig's", cfg.Host, cfg.CAFile)
	}
	if valid, err := kubeconfigStillValid(kubeconfig, time.Now()); !valid || err != nil {
		t.Errorf("the written kubeconfig is not valid (%v)", err)
	}
}

// A restart while the CSR waits asks for the same CSR again: its name is
// a digest of the kept key and the subject, and the key file stays until
// the certificate arrives.
func TestBootstrapRestartReusesTheRequest(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	certDir, err := PrepareCertDir(filepath.Join(dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	cp := newFakeControlPlane(t, ca, pending)
	var configs []*rest.Config
	var mu sync.Mutex
	cfg := BootstrapConfig{
		Kubeconfig: filepath.Join(dir, "kubelet.kubeconfig"), BootstrapKubeconfig: bootstrapKubeconfig, CertDir: certDir,
		NodeName: "node-b", NewClient: cp.newClientFunc(&configs, &mu), ApprovalTimeout: 200 * time.Millisecond,
	}
	if err := Bootstrap(context.Background(), cfg); err == nil {
		t.Fatal("a pending CSR: no error")
	}
	keyFile := filepath.Join(certDir, "kubelet-client.key.tmp")
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the waiting key: %v, mode %v; want it kept, 0600", err, fi.Mode())
	}
	if err := Bootstrap(context.Background(), cfg); err == nil {
		t.Fatal("a pending CSR: no error")
	}
	reqs := cp.requests()
	if len(reqs) != 2 || reqs[0].Name != reqs[1].Name {
		t.Fatalf("CSRs %d; want the same name twice (the second create finds the first)", len(reqs))
	}
	list, err := cp.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("CSRs in the API: %v (%v); want 1", len(list.Items), err)
	}
}
