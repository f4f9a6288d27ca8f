package certificate

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/connrotation"
)

// rotationCheckPeriod is how often the transport looks for a rotated
// certificate (the kubelet's updateTransport checks every 10 s).
const rotationCheckPeriod = 10 * time.Second

// rotatingTransport is the API clients' transport: it presents the
// current client certificate at each TLS handshake, and closes every
// connection it dialed once the certificate changed, so that watches and
// kept-alive connections too come back with the new one (HTTP/2 keeps a
// connection for as long as it is used).
type rotatingTransport struct {
	current func() *tls.Certificate
	dialer  *connrotation.Dialer
	log     *slog.Logger

	mu   sync.Mutex
	last *tls.Certificate // guarded by mu: what check saw last
}

// newRotatingConfig returns base without credentials and with a
// transport that presents current() as its client certificate.
func newRotatingConfig(base *rest.Config, current func() *tls.Certificate, log *slog.Logger) (*rest.Config, *rotatingTransport, error) {
	cfg := rest.AnonymousClientConfig(base)
	if cfg.Transport != nil || cfg.Dial != nil {
		return nil, nil, fmt.Errorf("kubeconfig for %s: a transport or dialer is already configured", base.Host)
	}
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig for %s: %w", base.Host, err)
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	rt := &rotatingTransport{
		current: current,
		dialer:  connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext),
		log:     log,
		last:    current(),
	}
	tlsConfig.Certificates = nil
	tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if c := rt.current(); c != nil {
			return c, nil
		}
		// No certificate (expired, or not issued yet): the handshake goes
		// on without one and the API server answers 401.
		return &tls.Certificate{}, nil
	}
	cfg.Transport = utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 25,
		DialContext:         rt.dialer.DialContext,
	})
	// The transport enforces the TLS settings now.
	cfg.TLSClientConfig = rest.TLSClientConfig{}
	return cfg, rt, nil
}

// check closes every connection when the certificate changed since the
// last check, and reports whether it did.
func (rt *rotatingTransport) check() bool {
	cur := rt.current()
	rt.mu.Lock()
	changed := cur != nil && cur != rt.last
	if changed {
		rt.last = cur
	}
	rt.mu.Unlock()
	if !changed {
		return false
	}
	rt.log.Info("Client certificate rotated: closing the API connections so that they reconnect with it",
		"serial", fmt.Sprintf("%X", cur.Leaf.SerialNumber), "notAfter", cur.Leaf.NotAfter)
	rt.dialer.CloseAll()
	return true
}

// run checks every rotationCheckPeriod until ctx ends, and logs while no
// valid certificate is at hand.
func (rt *rotatingTransport) run(ctx context.Context) {
	t := time.NewTicker(rotationCheckPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if rt.current() == nil {
				rt.log.Error("No valid client certificate: the API server refuses the node until the certificate manager gets a new one with the bootstrap identity")
			}
			rt.check()
		}
	}
}

// closeAll closes every connection the transport dialed.
func (rt *rotatingTransport) closeAll() { rt.dialer.CloseAll() }
