package integration_test

// TLS bootstrap against the real control plane (internal/clustertest): a
// node that has only the bootstrap token's kubeconfig, as `kubeadm join`
// gives one, gets its client certificate from the CSR API, and rotates it
// before it expires without disturbing its pods.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// rotationBudget is the longest certificate lifetime whose rotation the
// test waits for: a cluster started with
// PODLIFE_CLUSTER_SIGNING_DURATION=3m issues certificates valid 3 minutes
// from their issue (the signer backdates notBefore 5 minutes), which the
// certificate manager rotates 0.6 to 2.2 minutes after the issue.
const rotationBudget = 10 * time.Minute

func TestClusterTLSBootstrapAndRotation(t *testing.T) {
	n := newClusterNode(t)
	bootstrap := filepath.Join(n.c.Dir, "bootstrap.kubeconfig")
	if _, err := os.Stat(bootstrap); err != nil {
		t.Skipf("SKIPPED: the control plane has no bootstrap token (%v): start it with tools/cluster-up.sh of this tree", err)
	}
	// The node's kubeconfig does not exist: the bootstrap writes it.
	n.kubeconfig = filepath.Join(t.TempDir(), "kubelet.kubeconfig")
	m := &member{clusterNode: n}
	m.Harness = agenttest.Start(t, agenttest.WithConfig(func(cfg *config.Config) {
		cfg.NodeName = n.node
		cfg.Kubeconfig = n.kubeconfig
		cfg.BootstrapKubeconfig = bootstrap
		cfg.Allocatable = agenttest.Resources("cpu=8,memory=16Gi")
	}))
	m.agentLog = func() string { return m.Logs.Tail(60) }
	m.waitNodeReady()

	certDir := filepath.Join(m.Root, "pki")
	current := filepath.Join(certDir, "kubelet-client-current.pem")
	first := readCert(t, current)
	for path, mode := range map[string]os.FileMode{certDir: 0o700, n.kubeconfig: 0o600, current: 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v, mode %v; want %04o", path, err, fi.Mode(), mode)
		}
	}
	if first.Subject.CommonName != "system:node:"+n.node || !slices.Equal(first.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("client certificate subject %v; want the node's identity", first.Subject)
	}
	boot := nodeCSRs(t, m, "system:bootstrap:")
	if len(boot) != 1 || !issued(boot[0]) {
		t.Fatalf("CSRs of the bootstrap token for node %s: %d (%v); want one, approved by the controller manager and issued", n.node, len(boot), conditions(boot))
	}

	pod := m.apiPod("tls", 3, "main")
	pod.Spec.AutomountServiceAccountToken = new(false)
	m.create(pod)
	running := m.waitPhase("tls", v1.PodRunning)
	sandboxes := sandboxIDs(m, string(running.UID))

	t.Run("rotation", func(t *testing.T) {
		lifetime := time.Until(first.NotAfter)
		if lifetime > rotationBudget {
			t.Skipf("SKIPPED: the cluster signs certificates valid until %v (%v from now); the rotation test needs a cluster started with a short signing duration: PODLIFE_CLUSTER_SIGNING_DURATION=3m tools/cluster-up.sh", first.NotAfter, lifetime.Round(time.Second))
		}
		var rotated *x509.Certificate
		m.waitAPIWithin(lifetime+time.Minute, "a new client certificate in kubelet-client-current.pem", func(context.Context) (bool, error) {
			// client-go's certificate store replaces the link by a
			// remove and a rename: between the two it is not there.
			if _, err := os.Lstat(current); errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			rotated = readCert(t, current)
			return rotated.SerialNumber.Cmp(first.SerialNumber) != 0, nil
		})
		t.Logf("client certificate rotated: serial %X (until %v) -> %X (until %v)", first.SerialNumber, first.NotAfter, rotated.SerialNumber, rotated.NotAfter)
		if self := nodeCSRs(t, m, "system:node:"+n.node); len(self) == 0 || !slices.ContainsFunc(self, issued) {
			t.Errorf("no issued CSR made by system:node:%s itself (selfnodeclient): %v", n.node, conditions(self))
		}
		m.waitAPI("the agent closes its connections for the new certificate", func(context.Context) (bool, error) {
			return len(m.Logs.Lines("Client certificate rotated")) > 0, nil
		})
		// Past the first certificate's expiry, the node still talks to the
		// API server: with the new certificate.
		m.waitAPIWithin(time.Until(first.NotAfter)+time.Minute, "the node lease renewed after the first certificate expired", func(ctx context.Context) (bool, error) {
			lease, err := m.c.Admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, n.node, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(first.NotAfter.Add(time.Second)), nil
		})
		m.waitNodeReady()
		after, err := m.apiGet(context.Background(), "tls")
		if err != nil || after == nil {
			t.Fatalf("the pod after the rotation: %v, %v", after, err)
		}
		if after.UID != running.UID || after.Status.Phase != v1.PodRunning {
			t.Errorf("the pod after the rotation: UID %s phase %s; want %s Running", after.UID, after.Status.Phase, running.UID)
		}
		before, now := running.Status.ContainerStatuses, after.Status.ContainerStatuses
		if len(now) != 1 || now[0].ContainerID != before[0].ContainerID || now[0].RestartCount != 0 || now[0].State.Running == nil {
			t.Errorf("the container after the rotation: %+v; want %s running, never restarted", now, before[0].ContainerID)
		}
		if got := sandboxIDs(m, string(running.UID)); !slices.Equal(got, sandboxes) {
			t.Errorf("the pod's sandboxes after the rotation: %v; want the same %v", got, sandboxes)
		}
	})
}

// readCert reads the first certificate of a pem file.
func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(path, path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pair.Leaf
}

// nodeCSRs are the CSRs for the member's node client certificate made by a
// user whose name starts with requestor.
func nodeCSRs(t *testing.T, m *member, requestor string) []certificatesv1.CertificateSigningRequest {
	t.Helper()
	list, err := m.c.Admin.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list CSRs: %v", err)
	}
	var out []certificatesv1.CertificateSigningRequest
	for _, csr := range list.Items {
		block, _ := pem.Decode(csr.Spec.Request)
		if block == nil || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName || !strings.HasPrefix(csr.Spec.Username, requestor) {
			continue
		}
		if req, err := x509.ParseCertificateRequest(block.Bytes); err == nil && req.Subject.CommonName == "system:node:"+m.node {
			out = append(out, csr)
		}
	}
	return out
}

func issued(csr certificatesv1.CertificateSigningRequest) bool {
	approved := slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return c.Type == certificatesv1.CertificateApproved && c.Status == v1.ConditionTrue
	})
	return approved && len(csr.Status.Certificate) > 0
}

// conditions shows the CSRs' names and conditions, for a failure.
func conditions(csrs []certificatesv1.CertificateSigningRequest) []string {
	var out []string
	for _, csr := range csrs {
		var conds []string
		for _, c := range csr.Status.Conditions {
			conds = append(conds, string(c.Type))
		}
		out = append(out, csr.Name+" by "+csr.Spec.Username+": "+strings.Join(conds, ","))
	}
	return out
}

// sandboxIDs are the IDs of the runtime's sandboxes of pod uid, sorted.
func sandboxIDs(m *member, uid string) []string {
	var ids []string
	for _, sb := range m.Sandboxes(uid) {
		ids = append(ids, sb.Id)
	}
	slices.Sort(ids)
	return ids
}
