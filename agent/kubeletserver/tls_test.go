package kubeletserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA is a CA that signs client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t testing.TB, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// client is a client certificate for user cn in groups, signed by ca.
func (ca *testCA) client(t testing.TB, cn string, groups ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn, Organization: groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// listenTLS runs the server for host on a free loopback port with tlsCfg
// and the real authenticator of a client CA file, authorizing everyone.
func listenTLS(t testing.TB, ca *testCA, tlsCfg TLSConfig) *Server {
	t.Helper()
	return listenConfig(t, ca, Config{TLS: tlsCfg})
}

// listenConfig is listenTLS with cfg's other settings (TLS, timeouts).
func listenConfig(t testing.TB, ca *testCA, cfg Config) *Server {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	auth, err := BuildAuth(AuthConfig{ClientCAFile: caFile, Mode: ModeAlwaysAllow})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Address, cfg.Port, cfg.NodeName, cfg.Auth = "127.0.0.1", 0, "n1", auth
	s, err := Listen(newFakeHost(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		s.Close()
	})
	return s
}

// get fetches /healthz from s with the client certificate (none if nil)
// and returns the status and the server's certificate.
func get(t testing.TB, s *Server, cert *tls.Certificate) (int, *x509.Certificate) {
	t.Helper()
	cfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the test reads the certificate served
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	resp, err := client.Get("https://" + s.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	client.CloseIdleConnections()
	return resp.StatusCode, resp.TLS.PeerCertificates[0]
}

// With no certificate given, a self-signed one naming the node is made in
// the cert dir (0700, files 0600) and kept; client certificates of the
// client CA authenticate, others and none do not.
func TestSelfSignedAndClientCertificates(t *testing.T) {
	ca := newTestCA(t, "client-ca")
	dir := filepath.Join(t.TempDir(), "pki")
	tlsCfg := TLSConfig{CertDir: dir, Host: "n1", IPs: []net.IP{net.ParseIP("10.1.2.3")}, DNSNames: []string{"n1.example"}}
	s := listenTLS(t, ca, tlsCfg)
	good := ca.client(t, "system:kube-apiserver", "system:masters")
	other := newTestCA(t, "other-ca").client(t, "system:kube-apiserver")
	code, served := get(t, s, &good)
	if code != 200 {
		t.Errorf("a client certificate of the client CA: %d, want 200", code)
	}
	if got, want := strings.Join(served.DNSNames, ","), "n1,n1.example"; got != want {
		t.Errorf("self-signed certificate DNS names %q, want %q", got, want)
	}
	if got := strings.Join(ipStrings(served.IPAddresses), ","); got != "10.1.2.3" {
		t.Errorf("self-signed certificate IPs %q, want the node's 10.1.2.3", got)
	}
	if code, _ := get(t, s, &other); code != 401 {
		t.Errorf("a client certificate of another CA: %d, want 401", code)
	}
	if code, _ := get(t, s, nil); code != 401 {
		t.Errorf("no credentials: %d, want 401", code)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "kubelet.crt"): 0o600, filepath.Join(dir, "kubelet.key"): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", path, fi, err, want)
		}
	}
	// A second start keeps the certificate.
	if _, again := get(t, listenTLS(t, ca, tlsCfg), &good); !again.Equal(served) {
		t.Error("the self-signed certificate was made again: it is kept in the cert dir")
	}
}

func ipStrings(ips []net.IP) []string {
	var out []string
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}

// A GetCertificate (the CSR API's rotated certificate) comes first, then
// the files; the cert dir is then not touched.
func TestServingCertificateSources(t *testing.T) {
	ca := newTestCA(t, "client-ca")
	issued := newTestCA(t, "issued-serving").client(t, "system:node:n1")
	dir := filepath.Join(t.TempDir(), "pki")
	s := listenTLS(t, ca, TLSConfig{CertDir: dir, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &issued, nil }})
	good := ca.client(t, "admin")
	if _, served := get(t, s, &good); served.Subject.CommonName != "system:node:n1" {
		t.Errorf("served %v, want the GetCertificate's", served.Subject)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the cert dir was made although a certificate was given")
	}

	files := t.TempDir()
	certPEM, keyPEM := pemPair(t, newTestCA(t, "from-files").client(t, "from-files"))
	certFile, keyFile := filepath.Join(files, "serving.crt"), filepath.Join(files, "serving.key")
	_ = os.WriteFile(certFile, certPEM, 0o600)
	_ = os.WriteFile(keyFile, keyPEM, 0o600)
	s = listenTLS(t, ca, TLSConfig{CertDir: dir, CertFile: certFile, KeyFile: keyFile})
	if _, served := get(t, s, &good); served.Subject.CommonName != "from-files" {
		t.Errorf("served %v, want --tls-cert-file's", served.Subject)
	}
}

func pemPair(t testing.TB, c tls.Certificate) ([]byte, []byte) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// Bad TLS settings are refused, naming the flag or the directory.
func TestServingCertificateErrors(t *testing.T) {
	base := t.TempDir()
	link := filepath.Join(base, "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(open, 0o777)
	tests := []struct {
		cfg TLSConfig
		err string
	}{
		{TLSConfig{CertFile: "x.crt"}, "--tls-cert-file and --tls-private-key-file go together"},
		{TLSConfig{CertFile: filepath.Join(base, "none.crt"), KeyFile: filepath.Join(base, "none.key")}, "--tls-cert-file " + filepath.Join(base, "none.crt")},
		{TLSConfig{CertDir: link, Host: "n1"}, "is reached through a symbolic link"},
		{TLSConfig{CertDir: open, Host: "n1"}, "open to group or others (mode 0777)"},
		{TLSConfig{Host: "n1"}, "--cert-dir is empty"},
	}
	for _, tt := range tests {
		_, err := serverTLS(tt.cfg, discardLogger(), time.Now())
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%+v: %v, want an error with %q", tt.cfg, err, tt.err)
		}
	}
}
