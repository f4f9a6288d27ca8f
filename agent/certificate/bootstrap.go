package certificate

import (
	"context"
	"crypto"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"
)

// clientPairPrefix names the client certificate's files in the cert
// directory, as the kubelet's: kubelet-client-current.pem and
// kubelet-client-<time>.pem.
const clientPairPrefix = "kubelet-client"

// defaultApprovalTimeout bounds the wait for the bootstrap CSR to be
// approved and signed (the kubelet waits an hour too).
const defaultApprovalTimeout = time.Hour

// BootstrapConfig says where the node's credentials are and come from.
type BootstrapConfig struct {
	// Kubeconfig is --kubeconfig: used as it is while its client
	// certificate is valid, else written after the bootstrap.
	Kubeconfig string
	// BootstrapKubeconfig is --bootstrap-kubeconfig, whose identity (a
	// bootstrap token) may request a node client certificate.
	BootstrapKubeconfig string
	// CertDir holds the certificates and keys; PrepareCertDir checked it.
	CertDir  string
	NodeName string
	Logger   *slog.Logger // nil: no logs
	// NewClient makes the client of the bootstrap identity; nil:
	// kubernetes.NewForConfig. Tests give a fake.
	NewClient func(*rest.Config) (kubernetes.Interface, error)
	// ApprovalTimeout bounds the wait for the CSR to be signed; 0: 1 h.
	ApprovalTimeout time.Duration
}

// Bootstrap makes Kubeconfig hold a valid node client certificate, as the
// kubelet's bootstrap.LoadClientCert does: a valid one is kept; else a
// valid certificate already in the cert directory is used; else a CSR is
// made with the bootstrap identity and waited for. The key is kept in
// <cert-dir>/kubelet-client.key.tmp until the certificate arrives, so a
// restart while waiting asks again for the same request (its name is a
// digest of the key and subject) instead of piling up CSRs.
func Bootstrap(ctx context.Context, cfg BootstrapConfig) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if valid, err := kubeconfigStillValid(cfg.Kubeconfig, time.Now()); err != nil {
		return err
	} else if valid {
		log.Info("The kubeconfig's client certificate is valid; no bootstrap", "kubeconfig", cfg.Kubeconfig)
		return nil
	}
	bootCfg, err := loadKubeconfig(cfg.BootstrapKubeconfig)
	if err != nil {
		return fmt.Errorf("bootstrap kubeconfig %s: %w", cfg.BootstrapKubeconfig, err)
	}
	store, err := certificate.NewFileStoreWithLogger(klogFor(log).V(1), clientPairPrefix, cfg.CertDir, cfg.CertDir, "", "")
	if err != nil {
		return fmt.Errorf("cert directory %s: %w", cfg.CertDir, err)
	}
	if cert, err := store.Current(); err == nil && cert.Leaf != nil && certValidAt(cert.Leaf, time.Now()) {
		log.Info("A valid client certificate is in the cert directory; writing the kubeconfig", "cert", store.CurrentPath())
		return writeKubeconfig(bootCfg, cfg.Kubeconfig, store.CurrentPath())
	}
	keyPath := filepath.Join(cfg.CertDir, clientPairPrefix+".key.tmp")
	keyPEM, _, err := keyutil.LoadOrGenerateKeyFile(keyPath)
	if err != nil {
		return fmt.Errorf("client key: %w", err)
	}
	newClient := cfg.NewClient
	if newClient == nil {
		newClient = func(c *rest.Config) (kubernetes.Interface, error) { return kubernetes.NewForConfig(c) }
	}
	client, err := newClient(bootCfg)
	if err != nil {
		return fmt.Errorf("bootstrap kubeconfig %s: %w", cfg.BootstrapKubeconfig, err)
	}
	timeout := cfg.ApprovalTimeout
	if timeout == 0 {
		timeout = defaultApprovalTimeout
	}
	log.Info("Requesting a node client certificate with the bootstrap identity", "signer", certificatesv1.KubeAPIServerClientKubeletSignerName, "bootstrapKubeconfig", cfg.BootstrapKubeconfig)
	certPEM, err := requestClientCertificate(klog.NewContext(ctx, klogFor(log)), client, keyPEM, cfg.NodeName, timeout)
	if err != nil {
		return fmt.Errorf("node client certificate (with the identity of bootstrap kubeconfig %s): %w", cfg.BootstrapKubeconfig, err)
	}
	if _, err := store.Update(certPEM, keyPEM); err != nil {
		return fmt.Errorf("storing the client certificate in %s: %w", cfg.CertDir, err)
	}
	if err := os.Remove(keyPath); err != nil {
		log.Warn("Could not remove the bootstrap key file", "file", keyPath, "err", err)
	}
	log.Info("Node client certificate issued", "cert", store.CurrentPath())
	return writeKubeconfig(bootCfg, cfg.Kubeconfig, store.CurrentPath())
}

// ClientSubject is the node's identity in its client certificate: the Node
// authorizer and NodeRestriction know a node by it.
func ClientSubject(nodeName string) pkix.Name {
	return pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}}
}

// requestClientCertificate creates (or finds again) the node's CSR and
// waits until it is signed, denied or failed, with client-go's csr helpers.
func requestClientCertificate(ctx context.Context, client kubernetes.Interface, keyPEM []byte, nodeName string, timeout time.Duration) ([]byte, error) {
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("client key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("client key: %T is not a signing key", key)
	}
	subject := ClientSubject(nodeName)
	csrPEM, err := certutil.MakeCSR(key, &subject, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("making the CSR: %w", err)
	}
	usages := certificate.DefaultKubeletClientGetUsages(key)
	name, err := digestedName(signer.Public(), subject, usages)
	if err != nil {
		return nil, err
	}
	reqName, reqUID, err := csr.RequestCertificateWithContext(ctx, client, csrPEM, name, certificatesv1.KubeAPIServerClientKubeletSignerName, nil, usages, key)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	certPEM, err := csr.WaitForCertificate(ctx, client, reqName, reqUID)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("CSR %s was not approved and signed within %s (is the controller manager's csrapproving controller running, and may the bootstrap identity create node client CSRs?): %w", reqName, timeout, err)
		}
		return nil, fmt.Errorf("CSR %s: %w", reqName, err)
	}
	return certPEM, nil
}

// digestedName names the CSR after its key, subject and usages, so that
// the same request made again finds the first one.
func digestedName(publicKey crypto.PublicKey, subject pkix.Name, usages []certificatesv1.KeyUsage) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(publicKey)
	if err != nil {
		return "", fmt.Errorf("client key: %w", err)
	}
	hash := sha512.New512_256()
	write := func(b []byte) {
		hash.Write([]byte(base64.RawURLEncoding.EncodeToString(b)))
		hash.Write([]byte{'|'})
	}
	write(der)
	write([]byte(subject.CommonName))
	for _, o := range subject.Organization {
		write([]byte(o))
	}
	for _, u := range usages {
		write([]byte(u))
	}
	return "node-csr-" + base64.RawURLEncoding.EncodeToString(hash.Sum(nil)), nil
}

// kubeconfigStillValid reports whether the kubeconfig exists and its
// client certificate is valid now. A kubeconfig that cannot be read or
// holds no certificate is not valid: it is replaced after the bootstrap.
func kubeconfigStillValid(path string, now time.Time) (bool, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg, err := loadKubeconfig(path)
	if err != nil {
		return false, nil
	}
	certPEM := cfg.CertData
	if len(certPEM) == 0 && cfg.CertFile != "" {
		if certPEM, err = os.ReadFile(cfg.CertFile); err != nil {
			return false, nil
		}
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil || len(certs) == 0 {
		return false, nil
	}
	for _, c := range certs {
		if !certValidAt(c, now) {
			return false, nil
		}
	}
	return true, nil
}

func certValidAt(c *x509.Certificate, now time.Time) bool {
	return !now.Before(c.NotBefore) && !now.After(c.NotAfter)
}

// loadKubeconfig reads a kubeconfig file into a client configuration.
func loadKubeconfig(path string) (*rest.Config, error) {
	if path == "" {
		return nil, errors.New("no file given")
	}
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	return clientcmd.BuildConfigFromFlags("", path)
}

// writeKubeconfig writes, mode 0600 and atomically (a link at path is
// replaced, not followed), a kubeconfig for the bootstrap's server and CA
// whose client certificate and key are the pem file at certPath.
func writeKubeconfig(boot *rest.Config, path, certPath string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["default-cluster"] = &clientcmdapi.Cluster{
		Server:                   boot.Host,
		InsecureSkipTLSVerify:    boot.Insecure,
		CertificateAuthority:     boot.CAFile,
		CertificateAuthorityData: boot.CAData,
		TLSServerName:            boot.ServerName,
	}
	cfg.AuthInfos["default-auth"] = &clientcmdapi.AuthInfo{ClientCertificate: certPath, ClientKey: certPath}
	cfg.Contexts["default-context"] = &clientcmdapi.Context{Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default"}
	cfg.CurrentContext = "default-context"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if err := writeFileAtomic(path, data); err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return nil
}

// writeFileAtomic writes data to a new 0600 file beside path and renames
// it over path.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
