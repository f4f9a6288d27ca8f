package kubeletserver

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// With a GetCertificate (the serving certificate from the CSR API), the
// server serves the self-signed certificate while it has none, and its
// certificate once it has one.
func TestGetCertificateFallsBackToSelfSigned(t *testing.T) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("issued.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	issued, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	var current atomic.Pointer[tls.Certificate]
	c := TLSConfig{
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if cert := current.Load(); cert != nil {
				return cert, nil
			}
			return nil, errors.New("no serving certificate is issued yet")
		},
		CertDir: filepath.Join(t.TempDir(), "pki"), Host: "node-f",
	}
	cfg, err := serverTLS(c, slog.New(slog.DiscardHandler), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	before, err := cfg.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil || before == nil || before.Leaf == nil || before.Leaf.Subject.CommonName == "issued.example" {
		t.Fatalf("before issue: %v, %v; want the self-signed fallback", before, err)
	}
	current.Store(&issued)
	after, err := cfg.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil || after != &issued {
		t.Errorf("after issue: %v, %v; want the issued certificate", after, err)
	}
}
