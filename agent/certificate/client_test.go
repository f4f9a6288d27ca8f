package certificate

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/rest"

	"github.com/podlife/podlife/internal/testlog"
)

// A node bootstrapped with a certificate due for rotation gets a new one
// from its certificate manager, asked for with its own identity, and the
// new certificate replaces kubelet-client-current.pem.
func TestClientBootstrapsThenRotatesWithItsOwnIdentity(t *testing.T) {
	ca := newTestCA(t)
	cp := newFakeControlPlane(t, ca, issue)
	cp.firstExpiresIn = 30 * time.Second
	dir := t.TempDir()
	certDir, err := PrepareCertDir(filepath.Join(dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	var configs []*rest.Config
	var mu sync.Mutex
	log, logs := testlog.New()
	reg := prometheus.NewPedanticRegistry()
	c, err := NewClient(context.Background(), ClientConfig{
		BootstrapConfig: BootstrapConfig{
			Kubeconfig: filepath.Join(dir, "kubelet.kubeconfig"), BootstrapKubeconfig: bootstrapKubeconfig,
			CertDir: certDir, NodeName: "node-r", Logger: log, NewClient: cp.newClientFunc(&configs, &mu),
		},
		Registerer: reg,
	})
	if err != nil {
		t.Fatalf("NewClient: %v\n%s", err, logs.String())
	}
	defer c.Close()
	first := c.Current()
	if first == nil || len(cp.requests()) != 1 {
		t.Fatalf("after NewClient: certificate %v, %d CSRs; want the bootstrap's, 1", first, len(cp.requests()))
	}
	if cfg := c.Config(); cfg.Transport == nil || cfg.BearerToken != "" || cfg.CertFile != "" {
		t.Errorf("the API clients' config: transport %v, token %q, cert file %q; want the rotating transport only", cfg.Transport, cfg.BearerToken, cfg.CertFile)
	}
	if ttl := gaugeValue(t, reg, "kubelet_certificate_manager_client_ttl_seconds"); ttl <= 0 || ttl > 30 {
		t.Errorf("client ttl %v s; want the first certificate's (0, 30]", ttl)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	eventually(t, "the certificate is rotated", func() bool {
		cur := c.Current()
		return cur != nil && cur.Leaf.SerialNumber.Cmp(first.Leaf.SerialNumber) != 0
	})
	reqs := cp.requests()
	if len(reqs) < 2 || reqs[1].Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		t.Fatalf("rotation CSRs %d; want a second one for %s", len(reqs), certificatesv1.KubeAPIServerClientKubeletSignerName)
	}
	checkClientCSR(t, reqs[1], "node-r")
	mu.Lock()
	rotationConfig := configs[len(configs)-1]
	mu.Unlock()
	if rotationConfig.BearerToken != "" || rotationConfig.Transport == nil {
		t.Errorf("the rotation's CSR was made with token %q: want the node's own certificate (selfnodeclient)", rotationConfig.BearerToken)
	}
	onDisk, err := tls.LoadX509KeyPair(filepath.Join(certDir, "kubelet-client-current.pem"), filepath.Join(certDir, "kubelet-client-current.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if onDisk.Leaf.SerialNumber.Cmp(c.Current().Leaf.SerialNumber) != 0 {
		t.Errorf("kubelet-client-current.pem has serial %v, the manager %v", onDisk.Leaf.SerialNumber, c.Current().Leaf.SerialNumber)
	}
}

// A node whose kubeconfig is valid makes no CSR at start.
func TestClientWithAValidKubeconfigMakesNoCSR(t *testing.T) {
	ca := newTestCA(t)
	cp := newFakeControlPlane(t, ca, issue)
	dir := t.TempDir()
	certDir, err := PrepareCertDir(filepath.Join(dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM := ca.keyPair(t, ClientSubject("node-v"), time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	// The kubeconfig names a pem of its own, outside the cert directory.
	pemFile := filepath.Join(dir, "node.pem")
	if err := writeFileAtomic(pemFile, append(certPEM, keyPEM...)); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubelet.kubeconfig")
	if err := writeKubeconfig(&rest.Config{Host: "https://127.0.0.1:6443"}, kubeconfig, pemFile); err != nil {
		t.Fatal(err)
	}
	var configs []*rest.Config
	var mu sync.Mutex
	c, err := NewClient(context.Background(), ClientConfig{BootstrapConfig: BootstrapConfig{
		Kubeconfig: kubeconfig, BootstrapKubeconfig: bootstrapKubeconfig, CertDir: certDir, NodeName: "node-v",
		NewClient: cp.newClientFunc(&configs, &mu),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(cp.requests()) != 0 || len(configs) != 0 {
		t.Errorf("%d CSRs, %d clients made; want none", len(cp.requests()), len(configs))
	}
	if cur := c.Current(); cur == nil || string(pemBlock(cur.Certificate[0])) != string(certPEM) {
		t.Errorf("current certificate %v; want the kubeconfig's", cur)
	}
}

func pemBlock(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// gaugeValue is the value of the gauge name in g.
func gaugeValue(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}
