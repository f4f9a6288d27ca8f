package kubeletserver

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// The kubelet API closes a keep-alive connection that sends no further
// request once its idle timeout passed.
func TestIdleKeepAliveConnectionIsClosed(t *testing.T) {
	ca := newTestCA(t, "client-ca")
	s := listenConfig(t, ca, Config{TLS: TLSConfig{CertDir: filepath.Join(t.TempDir(), "pki"), Host: "n1"}, IdleTimeout: 100 * time.Millisecond})
	cert := ca.client(t, "system:kube-apiserver", "system:masters")
	//nolint:gosec // the server's certificate is self-signed; the test is about the connection
	c, err := tls.Dial("tcp", s.Addr(), &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", s.Addr()); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("GET /healthz: %s, close %v, %v; want 200 on a connection kept alive", resp.Status, resp.Close, err)
	}
	// Generous: the server closes it after 100 ms.
	if err := c.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("an idle keep-alive connection: read %d bytes, %v; want EOF (closed by the server)", n, err)
	}
}
