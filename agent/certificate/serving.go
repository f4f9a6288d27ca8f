package certificate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"
	"k8s.io/klog/v2"
)

// servingPairPrefix names the serving certificate's files in the cert
// directory, as the kubelet's: kubelet-server-current.pem.
const servingPairPrefix = "kubelet-server"

// ServingConfig configures NewServing.
type ServingConfig struct {
	CertDir  string // PrepareCertDir checked it
	NodeName string
	// CertFile and KeyFile are --tls-cert-file and --tls-private-key-file:
	// the store's certificate until the first CSR is signed; "": none.
	CertFile, KeyFile string
	// Client is the node's own (system:node:<name>): it creates the CSRs.
	Client kubernetes.Interface
	// Addresses are the node's addresses (the Node's status.addresses):
	// its host names and IPs are the certificate's SANs. No address, no
	// request.
	Addresses  func() []v1.NodeAddress
	Logger     *slog.Logger          // nil: no logs
	Registerer prometheus.Registerer // nil: no metrics
}

// Serving is the node's rotating serving certificate
// (--rotate-server-certificates, the kubelet's
// NewKubeletServerCertificateManager).
type Serving struct {
	manager certificate.Manager
	log     *slog.Logger
	// onFallback is whether the last handshake got the fallback, so that
	// the change either way is logged once, not at every handshake.
	onFallback atomic.Bool
}

// NewServing prepares the serving certificate manager; nothing is
// requested until Run.
func NewServing(cfg ServingConfig) (*Serving, error) {
	if cfg.Client == nil || cfg.Addresses == nil {
		return nil, errors.New("serving certificate: Client and Addresses are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	logger := klogFor(cfg.Logger)
	store, err := certificate.NewFileStoreWithLogger(logger.V(1), servingPairPrefix, cfg.CertDir, cfg.CertDir, cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("cert directory %s: %w", cfg.CertDir, err)
	}
	renewErrors := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kubelet_server_expiration_renew_errors",
		Help: "Counter of certificate renewal errors.",
	})
	managerCtx := klog.NewContext(context.Background(), logger)
	subject := ClientSubject(cfg.NodeName)
	m, err := certificate.NewManager(&certificate.Config{
		ClientsetFn: func(*tls.Certificate) (kubernetes.Interface, error) { return cfg.Client, nil },
		GetTemplate: func() *x509.CertificateRequest {
			dns, ips := sans(cfg.Addresses())
			if len(dns) == 0 && len(ips) == 0 {
				return nil
			}
			return &x509.CertificateRequest{Subject: subject, DNSNames: dns, IPAddresses: ips}
		},
		SignerName:              certificatesv1.KubeletServingSignerName,
		GetUsages:               certificate.DefaultKubeletServingGetUsages,
		CertificateStore:        store,
		CertificateRenewFailure: renewErrors,
		Name:                    servingPairPrefix,
		Ctx:                     &managerCtx,
	})
	if err != nil {
		return nil, fmt.Errorf("serving certificate manager: %w", err)
	}
	s := &Serving{manager: m, log: cfg.Logger}
	if cfg.Registerer != nil {
		ttl := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kubelet_certificate_manager_server_ttl_seconds",
			Help: "Seconds until the serving certificate expires (negative once expired, +Inf without one).",
		}, func() float64 { return ttlSeconds(m.Current(), time.Now()) })
		for _, col := range []prometheus.Collector{renewErrors, ttl} {
			if err := cfg.Registerer.Register(col); err != nil {
				return nil, fmt.Errorf("serving certificate metrics: %w", err)
			}
		}
	}
	return s, nil
}

// Run requests and rotates the serving certificate until ctx ends.
func (s *Serving) Run(ctx context.Context) {
	s.manager.Start()
	<-ctx.Done()
	s.manager.Stop()
}

// Current is the issued serving certificate; nil before the first is
// issued, or once it expired.
func (s *Serving) Current() *tls.Certificate { return s.manager.Current() }

// GetCertificate is the TLS server's tls.Config.GetCertificate: the
// current serving certificate, else an error, on which the kubelet API
// (agent/kubeletserver) serves its fallback (--tls-cert-file, else
// self-signed). The change either way is logged once.
func (s *Serving) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if cert := s.manager.Current(); cert != nil {
		if s.onFallback.Swap(false) {
			s.log.Info("Serving with the issued serving certificate", "serial", fmt.Sprintf("%X", cert.Leaf.SerialNumber), "notAfter", cert.Leaf.NotAfter)
		}
		return cert, nil
	}
	if !s.onFallback.Swap(true) {
		s.log.Warn("No serving certificate is issued yet: serving with the fallback certificate. No controller approves " +
			certificatesv1.KubeletServingSignerName + " CSRs: an admin approves them (kubectl get csr; kubectl certificate approve <name>)")
	}
	return nil, errors.New("no serving certificate is issued yet (approve the node's kubelet-serving CSR)")
}

// sans are the host names and IPs of the addresses, sorted and without
// duplicates, as the kubelet's serving certificate template has them.
func sans(addresses []v1.NodeAddress) ([]string, []net.IP) {
	var dns []string
	var ips []net.IP
	for _, a := range addresses {
		if a.Address == "" {
			continue
		}
		switch a.Type {
		case v1.NodeHostName, v1.NodeInternalDNS, v1.NodeExternalDNS:
			if !slices.Contains(dns, a.Address) {
				dns = append(dns, a.Address)
			}
		case v1.NodeInternalIP, v1.NodeExternalIP:
			if ip := net.ParseIP(a.Address); ip != nil && !slices.ContainsFunc(ips, ip.Equal) {
				ips = append(ips, ip)
			}
		}
	}
	slices.Sort(dns)
	slices.SortFunc(ips, func(a, b net.IP) int { return slices.Compare(a.To16(), b.To16()) })
	return dns, ips
}
