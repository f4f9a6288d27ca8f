// Package clustertest connects integration tests to the control plane that
// tools/cluster-up.sh started (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, configured as kubeadm configures them), named by
// PODLIFE_CLUSTER_DIR; without it the tests skip. Every test gets node
// identities of its own, minted from the cluster's CA, so tests can run
// side by side as separate nodes under the Node authorizer and
// NodeRestriction, and namespaces of its own, ready for pods (their
// `default` ServiceAccount made). It plays the part of the e2e framework's
// per-test namespace and node setup (k8s.io/kubernetes/test/e2e/framework).
package clustertest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// EnvDir names the directory of a running control plane: the
// PODLIFE_CLUSTER_DIR that tools/cluster-up.sh prints.
const EnvDir = "PODLIFE_CLUSTER_DIR"

// Cluster is a running control plane.
type Cluster struct {
	// Dir is the control plane's directory (pki/, *.kubeconfig, logs).
	Dir string
	// AdminKubeconfig is the kubeconfig of a system:masters user.
	AdminKubeconfig string
	// BootstrapKubeconfig is a kubeconfig with the cluster's bootstrap
	// token, as `kubeadm join` uses one: it may post CSRs for node client
	// certificates, which the controller manager approves and signs.
	BootstrapKubeconfig string
	// Admin is a client with that identity.
	Admin kubernetes.Interface
	// Server is the apiserver's URL.
	Server string
}

// Require returns the control plane named by PODLIFE_CLUSTER_DIR, or skips
// the test, saying how to start one.
func Require(t testing.TB) *Cluster {
	t.Helper()
	dir := os.Getenv(EnvDir)
	if dir == "" {
		t.Skipf("SKIPPED: no control plane (%s is unset); start one with: eval \"$(tools/cluster-up.sh)\"", EnvDir)
	}
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("%s=%s: %v", EnvDir, dir, err)
	}
	return &Cluster{
		Dir: dir, AdminKubeconfig: kubeconfig, Admin: newClient(t, cfg), Server: cfg.Host,
		BootstrapKubeconfig: filepath.Join(dir, "bootstrap.kubeconfig"),
	}
}

// newClient is a clientset whose connections are closed when the test
// ends, so none outlives it (goleak).
func newClient(t testing.TB, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { utilnet.CloseIdleConnectionsFor(httpClient.Transport) })
	client, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// Bin is the directory of the control plane's binaries (kubectl among
// them), from PODLIFE_CLUSTER_BIN or else next to the running apiserver.
func (c *Cluster) Bin(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("PODLIFE_CLUSTER_BIN"); bin != "" {
		return bin
	}
	pid, err := os.ReadFile(filepath.Join(c.Dir, "kube-apiserver.pid"))
	if err != nil {
		t.Fatalf("PODLIFE_CLUSTER_BIN is unset and the apiserver's pid is unknown: %v", err)
	}
	exe, err := os.Readlink(filepath.Join("/proc", strings.TrimSpace(string(pid)), "exe"))
	if err != nil {
		t.Fatalf("PODLIFE_CLUSTER_BIN is unset and the apiserver's binary is unknown: %v", err)
	}
	return filepath.Dir(exe)
}

// Kubectl runs kubectl as the admin and returns its combined output.
func (c *Cluster) Kubectl(t testing.TB, args ...string) (string, error) {
	t.Helper()
	return c.KubectlStdin(t, "", args...)
}

var unsafeName = regexp.MustCompile(`[^a-z0-9-]+`)

// NodeName returns a node name of its own for the test, and deletes that
// Node when the test ends: the node lifecycle controller would only taint a
// stopped node unreachable after its grace period (50 s), and the scheduler
// could place another test's pods on it meanwhile.
func (c *Cluster) NodeName(t testing.TB) string {
	t.Helper()
	base := strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 40 {
		base = strings.Trim(base[:40], "-")
	}
	name := "pl-" + base + "-" + rand.String(5)
	t.Cleanup(func() {
		err := c.Admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("delete node %s: %v", name, err)
		}
	})
	return name
}

// Namespace creates a namespace of its own for the test and waits until
// the service account controller made its `default` ServiceAccount: until
// then the ServiceAccount admission plugin refuses every pod in it (the e2e
// framework waits the same way). When the test ends, the pods in it are
// force-deleted (their node's agent is gone) and the namespace deleted; the
// namespace controller removes the rest.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pl-test-"}}
	ns, err := c.Admin.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		err := c.Admin.CoreV1().Pods(ns.Name).DeleteCollection(context.Background(),
			metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		if err != nil {
			t.Logf("delete the pods of namespace %s: %v", ns.Name, err)
		}
		err = c.Admin.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("delete namespace %s: %v", ns.Name, err)
		}
	})
	if err := c.waitDefaultServiceAccount(ns.Name); err != nil {
		t.Fatalf("namespace %s: %v", ns.Name, err)
	}
	return ns.Name
}

// serviceAccountTimeout bounds the wait for a namespace's `default`
// ServiceAccount; the controller makes it within a second when idle.
const serviceAccountTimeout = time.Minute

// waitDefaultServiceAccount waits until namespace ns has its `default`
// ServiceAccount.
func (c *Cluster) waitDefaultServiceAccount(ns string) error {
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, serviceAccountTimeout, true,
		func(ctx context.Context) (bool, error) {
			_, err := c.Admin.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, err
		})
	if err != nil {
		return fmt.Errorf("no default ServiceAccount after %v (is kube-controller-manager running? see %s): %w",
			serviceAccountTimeout, filepath.Join(c.Dir, "kube-controller-manager.log"), err)
	}
	return nil
}

// NodeKubeconfig writes a kubeconfig for the identity system:node:<name>
// in group system:nodes, with a client certificate signed by the cluster's
// CA, and returns its path.
func (c *Cluster) NodeKubeconfig(t testing.TB, name string) string {
	t.Helper()
	certPEM, keyPEM, err := c.signClientCert("system:node:"+name, "system:nodes")
	if err != nil {
		t.Fatalf("node certificate for %s: %v", name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["podlife"] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthority: filepath.Join(c.Dir, "pki", "ca.crt")}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["podlife"] = &clientcmdapi.Context{Cluster: "podlife", AuthInfo: name}
	cfg.CurrentContext = "podlife"
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// NodeClient is a client with the identity system:node:<name>.
func (c *Cluster) NodeClient(t testing.TB, name string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.NodeKubeconfig(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return newClient(t, cfg)
}

// AdminConfig is the admin's client configuration.
func (c *Cluster) AdminConfig(t testing.TB) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// signClientCert returns a PEM certificate and key for user cn in group
// org, valid for a day, signed by pki/ca.crt and pki/ca.key.
func (c *Cluster) signClientCert(cn, org string) (certPEM, keyPEM []byte, err error) {
	caCert, caKey, err := c.loadCA()
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := cryptorand.Int(cryptorand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{org}},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(cryptorand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

func (c *Cluster) loadCA() (*x509.Certificate, any, error) {
	certPEM, err := os.ReadFile(filepath.Join(c.Dir, "pki", "ca.crt"))
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(c.Dir, "pki", "ca.key"))
	if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("pki/ca.crt or pki/ca.key is not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	if key, err := x509.ParsePKCS8PrivateKey(kb.Bytes); err == nil {
		return cert, key, nil
	}
	if key, err := x509.ParsePKCS1PrivateKey(kb.Bytes); err == nil {
		return cert, key, nil
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("pki/ca.key: not a PKCS#8, PKCS#1 or EC key: %w", err)
	}
	return cert, key, nil
}

// KubectlStdin runs kubectl as the admin with stdin as its input.
func (c *Cluster) KubectlStdin(t testing.TB, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(c.Bin(t), "kubectl"), append([]string{"--kubeconfig", c.AdminKubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
