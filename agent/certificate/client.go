package certificate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/klog/v2"
)

// ClientConfig configures NewClient.
type ClientConfig struct {
	BootstrapConfig
	// Registerer gets the client certificate's metrics; nil: none.
	Registerer prometheus.Registerer
}

// Client is the node's rotating client credentials: Config is what the
// agent's API clients use, and Run keeps its certificate fresh.
type Client struct {
	manager   certificate.Manager
	transport *rotatingTransport
	config    *rest.Config
	log       *slog.Logger
}

// NewClient bootstraps the client certificate when needed (see Bootstrap;
// it blocks until the CSR is signed or ctx ends), then prepares client-go's
// certificate manager on the cert directory's kubelet-client store (the
// kubelet's NewKubeletClientCertificateManager) and a client configuration
// whose transport presents the manager's current certificate. Nothing
// rotates until Run.
func NewClient(ctx context.Context, cfg ClientConfig) (*Client, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.NewClient == nil {
		cfg.NewClient = func(c *rest.Config) (kubernetes.Interface, error) { return kubernetes.NewForConfig(c) }
	}
	if err := Bootstrap(ctx, cfg.BootstrapConfig); err != nil {
		return nil, err
	}
	userCfg, err := loadKubeconfig(cfg.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", cfg.Kubeconfig, err)
	}
	logger := klogFor(cfg.Logger)
	store, err := certificate.NewFileStoreWithLogger(logger.V(1), clientPairPrefix, cfg.CertDir, cfg.CertDir, userCfg.CertFile, userCfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("cert directory %s: %w", cfg.CertDir, err)
	}
	c := &Client{log: cfg.Logger}
	renewErrors := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kubelet_certificate_manager_client_expiration_renew_errors",
		Help: "Counter of certificate renewal errors.",
	})
	managerCtx := klog.NewContext(context.Background(), logger)
	subject := ClientSubject(cfg.NodeName)
	c.manager, err = certificate.NewManager(&certificate.Config{
		// With a valid certificate the node renews it as itself (the
		// approver's selfnodeclient case); without one, the bootstrap
		// identity asks again, as the kubelet does.
		ClientsetFn: func(current *tls.Certificate) (kubernetes.Interface, error) {
			if current != nil {
				return cfg.NewClient(c.config)
			}
			boot, err := loadKubeconfig(cfg.BootstrapKubeconfig)
			if err != nil {
				return nil, fmt.Errorf("bootstrap kubeconfig %s: %w", cfg.BootstrapKubeconfig, err)
			}
			return cfg.NewClient(boot)
		},
		Template:   &x509.CertificateRequest{Subject: subject},
		SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
		GetUsages:  certificate.DefaultKubeletClientGetUsages,
		// A kubeconfig with the certificate inline (kubeadm's on control
		// plane nodes) starts the store, and is rotated out at once.
		BootstrapCertificatePEM: userCfg.CertData,
		BootstrapKeyPEM:         userCfg.KeyData,
		CertificateStore:        store,
		CertificateRenewFailure: renewErrors,
		Name:                    clientPairPrefix,
		Ctx:                     &managerCtx,
	})
	if err != nil {
		return nil, fmt.Errorf("client certificate manager: %w", err)
	}
	if c.config, c.transport, err = newRotatingConfig(userCfg, c.manager.Current, cfg.Logger); err != nil {
		return nil, err
	}
	if cfg.Registerer != nil {
		ttl := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kubelet_certificate_manager_client_ttl_seconds",
			Help: "Seconds until the client certificate expires (negative once expired, +Inf without one).",
		}, func() float64 { return ttlSeconds(c.manager.Current(), time.Now()) })
		for _, col := range []prometheus.Collector{renewErrors, ttl} {
			if err := cfg.Registerer.Register(col); err != nil {
				return nil, fmt.Errorf("client certificate metrics: %w", err)
			}
		}
	}
	return c, nil
}

// Config is the API clients' configuration: the kubeconfig's server and
// CA, and a transport that presents the current client certificate.
func (c *Client) Config() *rest.Config { return rest.CopyConfig(c.config) }

// Current is the client certificate in use; nil when it expired.
func (c *Client) Current() *tls.Certificate { return c.manager.Current() }

// Run rotates the certificate before it expires (client-go's manager: at
// 70–90% of its lifetime) and moves the connections over to each new one,
// until ctx ends.
func (c *Client) Run(ctx context.Context) {
	c.manager.Start()
	defer c.manager.Stop()
	c.transport.run(ctx)
}

// Close closes the API connections.
func (c *Client) Close() { c.transport.closeAll() }

// ttlSeconds is what is left of the certificate's lifetime at now.
func ttlSeconds(cert *tls.Certificate, now time.Time) float64 {
	if cert == nil || cert.Leaf == nil {
		return math.Inf(1)
	}
	return cert.Leaf.NotAfter.Sub(now).Seconds()
}

// klogFor is the agent's logger as client-go's certificate code takes it.
func klogFor(log *slog.Logger) klog.Logger { return logr.FromSlogHandler(log.Handler()) }
