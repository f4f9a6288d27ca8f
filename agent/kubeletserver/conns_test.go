package kubeletserver

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// dialKubeletAPI opens a TLS connection to s, with cert (none if nil).
func dialKubeletAPI(t *testing.T, s *Server, cert *tls.Certificate) *tls.Conn {
	t.Helper()
	cfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the server's certificate is self-signed; the test is about the connection
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	c, err := tls.Dial("tcp", s.Addr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// getHealthz sends GET /healthz on c and reads the answer.
func getHealthz(t *testing.T, c net.Conn, r *bufio.Reader) int {
	t.Helper()
	if _, err := fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: n1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.Close {
		t.Fatalf("GET /healthz: %s, closing; want the connection kept alive", resp.Status)
	}
	return resp.StatusCode
}

// A connection none of whose requests authenticated is closed once idle
// for UnauthenticatedTimeout, not the keep-alive idle timeout; one whose
// request authenticated is kept for the idle timeout.
func TestUnauthenticatedConnectionsAreClosedSooner(t *testing.T) {
	ca := newTestCA(t, "client-ca")
	s := listenConfig(t, ca, Config{
		TLS:         TLSConfig{CertDir: filepath.Join(t.TempDir(), "pki"), Host: "n1"},
		IdleTimeout: time.Hour, UnauthenticatedTimeout: 100 * time.Millisecond,
	})
	cert := ca.client(t, "system:kube-apiserver", "system:masters")
	for _, tc := range []struct {
		name       string
		cert       *tls.Certificate
		code       int
		wantClosed bool
	}{
		{"unauthenticated", nil, http.StatusUnauthorized, true},
		{"authenticated", &cert, http.StatusOK, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialKubeletAPI(t, s, tc.cert)
			r := bufio.NewReader(c)
			if code := getHealthz(t, c, r); code != tc.code {
				t.Fatalf("GET /healthz: %d, want %d", code, tc.code)
			}
			// Generous: the server closes it 100 ms in, or an hour.
			wait := 20 * time.Second
			if !tc.wantClosed {
				wait = 500 * time.Millisecond // well past the unauthenticated timeout
			}
			if err := c.SetReadDeadline(time.Now().Add(wait)); err != nil {
				t.Fatal(err)
			}
			n, err := r.Read(make([]byte, 1))
			var netErr net.Error
			closed := errors.Is(err, io.EOF)
			timedOut := errors.As(err, &netErr) && netErr.Timeout()
			if closed != tc.wantClosed || (!closed && !timedOut) {
				t.Fatalf("an idle connection, %v later: read %d bytes, %v; want closed by the server: %v", wait, n, err, tc.wantClosed)
			}
			if !tc.wantClosed {
				if err := c.SetReadDeadline(time.Time{}); err != nil {
					t.Fatal(err)
				}
				if code := getHealthz(t, c, r); code != http.StatusOK {
					t.Errorf("a second request on the authenticated connection: %d, want 200", code)
				}
			}
		})
	}
}

// No more than MaxOpenConnections are served at once: the next waits
// until one closes.
func TestOpenConnectionsAreCapped(t *testing.T) {
	ca := newTestCA(t, "client-ca")
	s := listenConfig(t, ca, Config{
		TLS: TLSConfig{CertDir: filepath.Join(t.TempDir(), "pki"), Host: "n1"}, MaxOpenConnections: 2,
	})
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	done := make(chan error, 1)
	go func() {
		//nolint:gosec // the server's certificate is self-signed; the test is about the connection
		c, err := tls.Dial("tcp", s.Addr(), &tls.Config{InsecureSkipVerify: true})
		if err == nil {
			_ = c.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a third connection's TLS handshake with two open (the cap): %v; want it to wait", err)
	case <-time.After(300 * time.Millisecond): // time for a wrongly served handshake
	}
	_ = held[0].Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the third connection once one closed: %v", err)
		}
	case <-time.After(20 * time.Second): // generous: at once
		t.Error("the third connection was not served once one of the two closed")
	}
}

// Connections that fail their TLS handshake (garbage, or nothing before
// the unauthenticated timeout) log a burst of lines, then one every
// failureLogEvery, through the server's log rather than net/http's.
func TestFailedHandshakesAreLoggedThinly(t *testing.T) {
	var logs lockedBuffer
	s := listenWithReviews(t, &fakeTokenReviews{reviews: map[string]int{}}, &logs)
	const conns = 30
	start := time.Now()
	for range conns {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		// The server answers a plain HTTP request on its TLS port and closes.
		if err := c.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, c)
		_ = c.Close()
	}
	bound := failureLogBurst + 1 + int(time.Since(start)/failureLogEvery)
	if n := logs.lines("TLS handshake error"); n == 0 || n > bound {
		t.Errorf("%d log lines for %d failed handshakes, want 1 to %d:\n%s", n, conns, bound, logs.buf.String())
	}
}
