package certificate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/internal/testlog"
)

func TestServingSANs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		addresses []v1.NodeAddress
		wantDNS   []string
		wantIPs   []string
	}{
		{name: "none", addresses: nil},
		{
			name: "the agent's own: InternalIP and Hostname",
			addresses: []v1.NodeAddress{
				{Type: v1.NodeInternalIP, Address: "10.0.0.5"}, {Type: v1.NodeHostName, Address: "node-a"},
			},
			wantDNS: []string{"node-a"}, wantIPs: []string{"10.0.0.5"},
		},
		{
			name: "every kind, sorted, without duplicates or empty or bad addresses",
			addresses: []v1.NodeAddress{
				{Type: v1.NodeExternalIP, Address: "203.0.113.9"}, {Type: v1.NodeInternalIP, Address: "10.0.0.5"},
				{Type: v1.NodeInternalIP, Address: "10.0.0.5"}, {Type: v1.NodeInternalIP, Address: "fd00::5"},
				{Type: v1.NodeInternalIP, Address: "not-an-ip"}, {Type: v1.NodeHostName, Address: ""},
				{Type: v1.NodeExternalDNS, Address: "node-a.example.com"}, {Type: v1.NodeHostName, Address: "node-a"},
				{Type: v1.NodeInternalDNS, Address: "node-a"},
			},
			wantDNS: []string{"node-a", "node-a.example.com"}, wantIPs: []string{"10.0.0.5", "203.0.113.9", "fd00::5"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dns, ips := sans(tc.addresses)
			var gotIPs []string
			for _, ip := range ips {
				gotIPs = append(gotIPs, ip.String())
			}
			if !slices.Equal(dns, tc.wantDNS) || !slices.Equal(gotIPs, tc.wantIPs) {
				t.Errorf("sans: DNS %v IPs %v; want %v %v", dns, gotIPs, tc.wantDNS, tc.wantIPs)
			}
		})
	}
}

// Until an admin approves the serving CSR, GetCertificate has no
// certificate (the kubelet API serves its fallback; logged once); then the
// issued certificate, with the node's subject and addresses and the
// kubelet-serving signer's usages.
func TestServingFallsBackUntilTheCSRIsApproved(t *testing.T) {
	ca := newTestCA(t)
	cp := newFakeControlPlane(t, ca, pending)
	certDir, err := PrepareCertDir(filepath.Join(t.TempDir(), "pki"))
	if err != nil {
		t.Fatal(err)
	}
	log, logs := testlog.New()
	addresses := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.7"}, {Type: v1.NodeHostName, Address: "node-s"}}
	s, err := NewServing(ServingConfig{
		CertDir: certDir, NodeName: "node-s", Client: cp, Logger: log,
		Addresses: func() []v1.NodeAddress { return addresses },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	defer func() { cancel(); <-done }()

	eventually(t, "a serving CSR", func() bool { return len(cp.requests()) > 0 })
	for range 3 {
		if got, err := s.GetCertificate(&tls.ClientHelloInfo{}); err == nil || got != nil || !strings.Contains(err.Error(), "approve") {
			t.Fatalf("pending CSR: GetCertificate %v, %v; want no certificate and an error saying to approve the CSR", got, err)
		}
	}
	if n := len(logs.Lines("serving with the fallback certificate", "kubectl certificate approve")); n != 1 {
		t.Errorf("%d log lines about the fallback, want 1:\n%s", n, logs.String())
	}
	csr := cp.requests()[0]
	checkServingCSR(t, csr, "node-s", []string{"node-s"}, []string{"10.0.0.7"})

	// The admin approves; the controller manager signs.
	approved := csr.DeepCopy()
	cert, err := ca.sign(csr.Spec.Request, time.Now().Add(-time.Minute), time.Now().Add(time.Hour), x509.ExtKeyUsageServerAuth)
	if err != nil {
		t.Fatal(err)
	}
	approved.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: v1.ConditionTrue, Reason: "KubectlApprove"}}
	approved.Status.Certificate = cert
	if _, err := cp.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, approved, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the issued serving certificate", func() bool { return s.Current() != nil })
	got, err := s.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil || string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: got.Certificate[0]})) != string(cert) {
		t.Errorf("after approval: GetCertificate %v; want the issued certificate", err)
	}
	if n := len(logs.Lines("Serving with the issued serving certificate")); n != 1 {
		t.Errorf("%d log lines about the issued certificate, want 1", n)
	}
}

func checkServingCSR(t *testing.T, csr *certificatesv1.CertificateSigningRequest, node string, dns, ips []string) {
	t.Helper()
	if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName {
		t.Errorf("signer %q, want %q", csr.Spec.SignerName, certificatesv1.KubeletServingSignerName)
	}
	wantUsages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
	if !slices.Equal(csr.Spec.Usages, wantUsages) {
		t.Errorf("usages %v, want %v", csr.Spec.Usages, wantUsages)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if req.Subject.CommonName != "system:node:"+node || !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("subject %v, want CN=system:node:%s O=system:nodes", req.Subject, node)
	}
	gotIPs := make([]string, 0, len(req.IPAddresses))
	for _, ip := range req.IPAddresses {
		gotIPs = append(gotIPs, ip.String())
	}
	if !slices.Equal(req.DNSNames, dns) || !slices.Equal(gotIPs, ips) {
		t.Errorf("SANs DNS %v IPs %v, want %v %v", req.DNSNames, gotIPs, dns, ips)
	}
}
