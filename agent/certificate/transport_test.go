package certificate

import (
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/podlife/podlife/internal/testlog"
)

// The transport presents the current certificate; a connection kept alive
// stays on the old one until check sees the rotation and closes it.
func TestRotatingTransportMovesConnectionsToTheNewCertificate(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client certificate", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, r.TLS.PeerCertificates[0].SerialNumber.String())
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	defer srv.Close()

	ca := newTestCA(t)
	pair := func() *tls.Certificate {
		certPEM, keyPEM := ca.keyPair(t, ClientSubject("node-t"), time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return &c
	}
	first, second := pair(), pair()
	var current atomic.Pointer[tls.Certificate]
	base := &rest.Config{Host: srv.URL, BearerToken: "must-not-be-sent", TLSClientConfig: rest.TLSClientConfig{
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
	}}
	log, logs := testlog.New()
	cfg, rt, err := newRotatingConfig(base, current.Load, log)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken != "" || cfg.Transport == nil {
		t.Fatalf("the rotating config keeps the token %q or has no transport", cfg.BearerToken)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.closeAll()
	get := func() string {
		t.Helper()
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(body)
	}
	serial := func(c *tls.Certificate) string { return "200 OK " + c.Leaf.SerialNumber.String() }

	if got := get(); got != "401 Unauthorized no client certificate\n" {
		t.Errorf("without a certificate: %q; want the server's 401", got)
	}
	if rt.check() {
		t.Errorf("check saw a rotation while there is no certificate")
	}
	current.Store(first)
	rt.check() // the first certificate: the 401 connection is closed
	if got := get(); got != serial(first) {
		t.Errorf("with the first certificate: %q, want %q", got, serial(first))
	}
	current.Store(second)
	if got := get(); got != serial(first) {
		t.Errorf("before check, the kept-alive connection: %q, want still %q", got, serial(first))
	}
	if !rt.check() {
		t.Fatalf("check did not see the rotation")
	}
	if got := get(); got != serial(second) {
		t.Errorf("after the rotation: %q, want %q", got, serial(second))
	}
	if rt.check() {
		t.Errorf("check saw a second rotation of the same certificate")
	}
	if n := len(logs.Lines("Client certificate rotated", fmt.Sprintf("serial=%X", second.Leaf.SerialNumber))); n != 1 {
		t.Errorf("%d log lines about the rotation to the second certificate, want 1:\n%s", n, logs.String())
	}
}
