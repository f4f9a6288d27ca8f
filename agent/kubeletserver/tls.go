package kubeletserver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"github.com/podlife/podlife/internal/owndir"
)

// TLSConfig says where the serving certificate comes from, in the
// kubelet's order: a GetCertificate (a certificate the CSR API issued and
// rotates), the files of --tls-cert-file and --tls-private-key-file, and
// as the last resort a self-signed certificate in CertDir. The last two
// are also what is served while GetCertificate has no certificate (its
// CSR not approved yet).
type TLSConfig struct {
	GetCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	CertFile       string
	KeyFile        string
	// CertDir holds the self-signed kubelet.crt and kubelet.key (created
	// 0700, the files 0600); they are made once and kept.
	CertDir string
	// Host, IPs and DNSNames are the self-signed certificate's names: the
	// node's name and addresses.
	Host     string
	IPs      []net.IP
	DNSNames []string
}

// Self-signed file names, the kubelet's.
const (
	selfSignedCert = "kubelet.crt"
	selfSignedKey  = "kubelet.key"
)

// serverTLS is the TLS configuration of the listener: the serving
// certificate, and client certificates requested (not required) so that
// the x509 authenticator can check them against the client CA.
func serverTLS(c TLSConfig, log *slog.Logger, now time.Time) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ClientAuth: tls.RequestClientCert}
	if c.GetCertificate != nil {
		cfg.GetCertificate = withFallback(c, log, now)
		return cfg, nil
	}
	cert, err := fileOrSelfSigned(c, log, now)
	if err != nil {
		return nil, err
	}
	cfg.Certificates = []tls.Certificate{cert}
	return cfg, nil
}

// withFallback serves c.GetCertificate's certificate and, while it has
// none (a serving CSR not approved yet), the files' or the self-signed
// one, made at the first handshake that needs it.
func withFallback(c TLSConfig, log *slog.Logger, now time.Time) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	fallback := sync.OnceValues(func() (*tls.Certificate, error) {
		cert, err := fileOrSelfSigned(c, log, now)
		return &cert, err
	})
	return func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if cert, err := c.GetCertificate(hello); err == nil && cert != nil {
			return cert, nil
		}
		return fallback()
	}
}

// fileOrSelfSigned is the certificate of CertFile and KeyFile, else a
// self-signed one.
func fileOrSelfSigned(c TLSConfig, log *slog.Logger, now time.Time) (tls.Certificate, error) {
	switch {
	case c.CertFile != "" || c.KeyFile != "":
		if c.CertFile == "" || c.KeyFile == "" {
			return tls.Certificate{}, errors.New("--tls-cert-file and --tls-private-key-file go together: give both or neither")
		}
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("--tls-cert-file %s / --tls-private-key-file %s: %w", c.CertFile, c.KeyFile, err)
		}
		return cert, nil
	default:
		return selfSigned(c, log, now)
	}
}

// selfSigned loads the self-signed certificate of CertDir, or makes it
// (a CA and a serving certificate it signs, as the kubelet's
// certutil.GenerateSelfSignedCertKey) when it is missing or expired.
func selfSigned(c TLSConfig, log *slog.Logger, now time.Time) (tls.Certificate, error) {
	if _, err := owndir.Prepare("--cert-dir", c.CertDir, true); err != nil {
		return tls.Certificate{}, err
	}
	certPath, keyPath := filepath.Join(c.CertDir, selfSignedCert), filepath.Join(c.CertDir, selfSignedKey)
	certPEM, certErr := readNoFollow(certPath)
	keyPEM, keyErr := readNoFollow(keyPath)
	if certErr == nil && keyErr == nil {
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err == nil && now.Before(cert.Leaf.NotAfter) {
			log.Warn("kubelet API: serving a self-signed certificate (the last resort: no --tls-cert-file, no certificate from the CSR API); clients cannot verify it",
				"cert", certPath)
			return cert, nil
		}
	} else if !errors.Is(certErr, fs.ErrNotExist) && certErr != nil {
		return tls.Certificate{}, fmt.Errorf("--cert-dir: %w", certErr)
	} else if !errors.Is(keyErr, fs.ErrNotExist) && keyErr != nil {
		return tls.Certificate{}, fmt.Errorf("--cert-dir: %w", keyErr)
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(c.Host, c.IPs, c.DNSNames)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("self-signed serving certificate: %w", err)
	}
	if err := writePrivate(c.CertDir, selfSignedKey, keyPEM); err != nil {
		return tls.Certificate{}, err
	}
	if err := writePrivate(c.CertDir, selfSignedCert, certPEM); err != nil {
		return tls.Certificate{}, err
	}
	log.Warn("kubelet API: made a self-signed serving certificate (the last resort: no --tls-cert-file, no certificate from the CSR API); clients cannot verify it",
		"cert", certPath, "host", c.Host, "ips", c.IPs)
	return tls.X509KeyPair(certPEM, keyPEM)
}

// readNoFollow reads a regular file without following a symbolic link.
func readNoFollow(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return io.ReadAll(f)
}

// writePrivate writes data to dir/name, mode 0600, atomically (a new file
// renamed over the old one, which replaces a link rather than follow it).
func writePrivate(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("--cert-dir: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("--cert-dir: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--cert-dir: %w", err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("--cert-dir: %w", err)
	}
	return nil
}
