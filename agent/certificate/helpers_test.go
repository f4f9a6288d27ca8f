package certificate

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"path/filepath"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/keyutil"
)

// bootstrapKubeconfig is a bootstrap kubeconfig as kubeadm writes one.
const bootstrapKubeconfig = "testdata/bootstrap.kubeconfig"

// testCA signs certificates as the controller manager's signer does.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t testing.TB) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "podlife-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(cryptorand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

// sign issues a certificate for the public key and names of the CSR,
// valid from notBefore to notAfter.
func (ca *testCA) sign(csrPEM []byte, notBefore, notAfter time.Time, eku x509.ExtKeyUsage) ([]byte, error) {
	block, _ := pem.Decode(csrPEM)
	if block == nil {
		return nil, fmt.Errorf("CSR is not PEM")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, err
	}
	serial, err := cryptorand.Int(cryptorand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: req.Subject, DNSNames: req.DNSNames, IPAddresses: req.IPAddresses,
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{eku},
	}
	der, err := x509.CreateCertificate(cryptorand.Reader, tmpl, ca.cert, req.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// keyPair returns a new key and a certificate for it with the subject,
// valid from notBefore to notAfter, both PEM.
func (ca *testCA) keyPair(t testing.TB, subject pkix.Name, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	keyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(cryptorand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err = ca.sign(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), notBefore, notAfter, x509.ExtKeyUsageClientAuth)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}

// outcome is what the fake control plane does with a new CSR.
type outcome int

const (
	issue   outcome = iota // approve it and sign it for an hour
	deny                   // deny it
	pending                // leave it pending
)

// fakeControlPlane is a fake clientset whose CSRs are approved and signed,
// denied or left pending, as the controller manager would, the moment
// they are created; it keeps what was requested.
type fakeControlPlane struct {
	*fake.Clientset
	ca       *testCA
	lifetime time.Duration // of the certificates it signs
	// firstExpiresIn, if set, makes the first certificate it signs one
	// issued an hour ago that expires in that time: due for rotation.
	firstExpiresIn time.Duration

	mu      sync.Mutex
	outcome outcome
	created []*certificatesv1.CertificateSigningRequest
}

func newFakeControlPlane(t testing.TB, ca *testCA, o outcome) *fakeControlPlane {
	f := &fakeControlPlane{Clientset: fake.NewClientset(), ca: ca, outcome: o, lifetime: time.Hour}
	f.PrependReactor("create", "certificatesigningrequests", func(action k8stesting.Action) (bool, runtime.Object, error) {
		csr := action.(k8stesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		if csr.Name == "" {
			csr.Name = csr.GenerateName + rand.String(5)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.created = append(f.created, csr.DeepCopy())
		switch f.outcome {
		case issue:
			eku := x509.ExtKeyUsageClientAuth
			if csr.Spec.SignerName == certificatesv1.KubeletServingSignerName {
				eku = x509.ExtKeyUsageServerAuth
			}
			now := time.Now()
			notBefore, notAfter := now.Add(-time.Minute), now.Add(f.lifetime)
			if f.firstExpiresIn > 0 && len(f.created) == 1 {
				notBefore, notAfter = now.Add(-time.Hour), now.Add(f.firstExpiresIn)
			}
			cert, err := ca.sign(csr.Spec.Request, notBefore, notAfter, eku)
			if err != nil {
				return true, nil, err
			}
			csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
				Type: certificatesv1.CertificateApproved, Status: v1.ConditionTrue, Reason: "AutoApproved", LastUpdateTime: metav1.Now(),
			}}
			csr.Status.Certificate = cert
		case deny:
			csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
				Type: certificatesv1.CertificateDenied, Status: v1.ConditionTrue, Reason: "NotANode", Message: "denied by the test", LastUpdateTime: metav1.Now(),
			}}
		}
		return false, nil, nil // the tracker stores it, status included
	})
	return f
}

// requests are the CSRs created so far.
func (f *fakeControlPlane) requests() []*certificatesv1.CertificateSigningRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*certificatesv1.CertificateSigningRequest(nil), f.created...)
}

// newClientFunc returns f for every configuration, and records them.
func (f *fakeControlPlane) newClientFunc(configs *[]*rest.Config, mu *sync.Mutex) func(*rest.Config) (kubernetes.Interface, error) {
	return func(c *rest.Config) (kubernetes.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		*configs = append(*configs, c)
		return f, nil
	}
}

// writeNodeKubeconfig writes a kubeconfig with an inline client
// certificate and returns its path.
func writeNodeKubeconfig(t testing.TB, dir string, certPEM, keyPEM []byte) string {
	t.Helper()
	caFile, err := filepath.Abs("testdata/ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthority: caFile}
	cfg.AuthInfos["node"] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "node"}
	cfg.CurrentContext = "c"
	path := filepath.Join(dir, "node.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// eventually polls cond until it holds, for at most 30 s (the machine is
// small and shared).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("%s: not within 30s", what)
	}
}
