package clustertest

// Tests of the control plane itself: what tools/cluster-up.sh configures as
// kubeadm does (etcd client certificates, the service-account machinery, the
// bootstrap token, the CSR and node lifecycle controllers) is in place.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
)

// controllerTimeout bounds each wait for a controller of the controller
// manager to act.
const controllerTimeout = time.Minute

// envValue is KEY's value in the cluster's podlife-cluster.env.
func (c *Cluster) envValue(t *testing.T, key string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.Dir, "podlife-cluster.env"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return v
		}
	}
	t.Fatalf("podlife-cluster.env has no %s", key)
	return ""
}

// pollUntil polls cond every 200 ms until it holds, failing the test after
// controllerTimeout.
func pollUntil(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, controllerTimeout, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestEtcdRequiresClientCertificates: etcd answers only clients with a
// certificate of its own CA, as the apiserver's; neither a client without
// one nor one of the cluster CA (an admin's) gets in.
func TestEtcdRequiresClientCertificates(t *testing.T) {
	c := Require(t)
	pki := filepath.Join(c.Dir, "pki")
	caPEM, err := os.ReadFile(filepath.Join(pki, "etcd", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("pki/etcd/ca.crt holds no certificate")
	}
	url := "https://127.0.0.1:" + c.envValue(t, "ETCD_PORT") + "/health"
	for _, tc := range []struct {
		name   string
		cert   string // the client certificate under pki/, without .crt; none if empty
		wantOK bool
	}{
		{name: "no client certificate"},
		{name: "a certificate of the cluster CA", cert: "admin"},
		{name: "the apiserver's etcd client certificate", cert: "apiserver-etcd-client", wantOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
			if tc.cert != "" {
				pair, err := tls.LoadX509KeyPair(filepath.Join(pki, tc.cert+".crt"), filepath.Join(pki, tc.cert+".key"))
				if err != nil {
					t.Fatal(err)
				}
				cfg.Certificates = []tls.Certificate{pair}
			}
			transport := &http.Transport{TLSClientConfig: cfg}
			defer transport.CloseIdleConnections()
			resp, err := (&http.Client{Transport: transport, Timeout: 10 * time.Second}).Get(url)
			if err == nil {
				_ = resp.Body.Close()
			}
			ok := err == nil && resp.StatusCode == http.StatusOK
			if ok != tc.wantOK {
				t.Errorf("GET %s: answered %v (err %v), want answered %v", url, ok, err, tc.wantOK)
			}
		})
	}
}

// TestNamespaceIsReadyForPods: a namespace of Namespace has its `default`
// ServiceAccount and, from the root-CA publisher, the kube-root-ca.crt
// ConfigMap with the cluster CA; a pod created in it is admitted with the
// projected kube-api-access-* volume the ServiceAccount admission plugin
// adds (token, CA, namespace), as in every real cluster.
func TestNamespaceIsReadyForPods(t *testing.T) {
	c := Require(t)
	ns := c.Namespace(t)
	ctx := context.Background()
	if _, err := c.Admin.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("the default ServiceAccount: %v", err)
	}
	ca, err := os.ReadFile(filepath.Join(c.Dir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "kube-root-ca.crt holds the cluster CA", func(ctx context.Context) (bool, error) {
		cm, err := c.Admin.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && strings.TrimSpace(cm.Data["ca.crt"]) == strings.TrimSpace(string(ca)), err
	})

	// A node selector nothing matches: the pod is admitted, never scheduled.
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "admitted"},
		Spec: v1.PodSpec{
			NodeSelector: map[string]string{"podlife.dev/no-such-node": "true"},
			Containers:   []v1.Container{{Name: "main", Image: "localhost/podlife/busybox:latest"}},
		},
	}
	pod, err = c.Admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a pod: %v", err)
	}
	if pod.Spec.ServiceAccountName != "default" {
		t.Errorf("serviceAccountName %q, want default", pod.Spec.ServiceAccountName)
	}
	var projected *v1.ProjectedVolumeSource
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, "kube-api-access-") && v.Projected != nil {
			projected = v.Projected
		}
	}
	if projected == nil {
		t.Fatalf("no projected kube-api-access-* volume: %+v", pod.Spec.Volumes)
	}
	for _, tc := range []struct {
		source string
		has    func(v1.VolumeProjection) bool
	}{
		{"a service account token", func(p v1.VolumeProjection) bool {
			return p.ServiceAccountToken != nil && p.ServiceAccountToken.Path == "token"
		}},
		{"the kube-root-ca.crt ConfigMap", func(p v1.VolumeProjection) bool {
			return p.ConfigMap != nil && p.ConfigMap.Name == "kube-root-ca.crt"
		}},
		{"the namespace", func(p v1.VolumeProjection) bool {
			return p.DownwardAPI != nil && len(p.DownwardAPI.Items) == 1 && p.DownwardAPI.Items[0].FieldRef.FieldPath == "metadata.namespace"
		}},
	} {
		if !slices.ContainsFunc(projected.Sources, tc.has) {
			t.Errorf("the projected volume lacks %s: %+v", tc.source, projected.Sources)
		}
	}
}

// TestBootstrapTokenJoin: the bootstrap token authenticates as kubeadm's
// (system:bootstrap:<id> in system:bootstrappers:kubeadm:default-node-token),
// the bootstrapsigner signs cluster-info with it, and a node client CSR it
// posts is approved and signed by the controller manager with the cluster
// CA, for the node's identity.
func TestBootstrapTokenJoin(t *testing.T) {
	c := Require(t)
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.BootstrapKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	bootstrap := newClient(t, cfg)
	tokenID := c.envValue(t, "BOOTSTRAP_TOKEN_ID")

	review, err := bootstrap.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("self subject review with the bootstrap token: %v", err)
	}
	user := review.Status.UserInfo
	if user.Username != "system:bootstrap:"+tokenID {
		t.Errorf("user %q, want system:bootstrap:%s", user.Username, tokenID)
	}
	for _, group := range []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:authenticated"} {
		if !slices.Contains(user.Groups, group) {
			t.Errorf("groups %v lack %s", user.Groups, group)
		}
	}

	pollUntil(t, "the bootstrapsigner signs cluster-info", func(ctx context.Context) (bool, error) {
		cm, err := c.Admin.CoreV1().ConfigMaps("kube-public").Get(ctx, "cluster-info", metav1.GetOptions{})
		return err == nil && cm.Data["jws-kubeconfig-"+tokenID] != "", err
	})

	node := c.NodeName(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	request, err := certutil.MakeCSR(key, &pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	name, uid, err := csr.RequestCertificateWithContext(ctx, bootstrap, request, "", certificatesv1.KubeAPIServerClientKubeletSignerName, nil,
		[]certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}, key)
	if err != nil {
		t.Fatalf("post the CSR: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Admin.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Logf("delete CSR %s: %v", name, err)
		}
	})
	waitCtx, cancel := context.WithTimeout(ctx, controllerTimeout)
	defer cancel()
	certPEM, err := csr.WaitForCertificate(waitCtx, bootstrap, name, uid)
	if err != nil {
		t.Fatalf("CSR %s is not approved and signed: %v", name, err)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatalf("CSR %s: the certificate is not PEM", name)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ca, _, err := c.loadCA()
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.CheckSignatureFrom(ca); err != nil {
		t.Errorf("the certificate is not signed by the cluster CA: %v", err)
	}
	if cert.Subject.CommonName != "system:node:"+node || !slices.Equal(cert.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("subject %v, want CN=system:node:%s O=system:nodes", cert.Subject, node)
	}
	if !bytes.Equal(cert.RawSubjectPublicKeyInfo, mustMarshalPKIX(t, &key.PublicKey)) {
		t.Error("the certificate is not for the CSR's key")
	}
}

func mustMarshalPKIX(t *testing.T, pub any) []byte {
	t.Helper()
	b, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNodeLifecycleTaints: a new Node is tainted
// node.kubernetes.io/not-ready:NoSchedule (the TaintNodesByCondition
// admission plugin), and the node lifecycle controller lifts the taint once
// the node reports Ready: what makes a joining node schedulable.
func TestNodeLifecycleTaints(t *testing.T) {
	c := Require(t)
	ctx := context.Background()
	name := c.NodeName(t)
	client := c.NodeClient(t, name)
	node, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("register the node: %v", err)
	}
	notReady := v1.Taint{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoSchedule}
	hasNotReady := func(n *v1.Node) bool {
		return slices.ContainsFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.MatchTaint(&notReady) })
	}
	if !hasNotReady(node) {
		t.Fatalf("a new Node has taints %v, want %s", node.Spec.Taints, notReady.ToString())
	}

	// The controller writes the new Node too (its Ready condition Unknown,
	// its taints): a status patch, as the node agent's, applies to its
	// latest version. An update of a stale copy would carry stale taints,
	// which NodeRestriction refuses before any conflict check.
	now := time.Now().UTC().Format(time.RFC3339)
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"test","lastHeartbeatTime":%q,"lastTransitionTime":%q}]}}`, now, now)
	_, err = client.CoreV1().Nodes().PatchStatus(ctx, name, []byte(patch))
	if err != nil {
		t.Fatalf("report Ready: %v", err)
	}
	pollUntil(t, "the node lifecycle controller lifts "+notReady.ToString(), func(ctx context.Context) (bool, error) {
		n, err := c.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && !hasNotReady(n), err
	})
}

// TestAPIServerIdentities: the identities kubeadm gives the apiserver have
// their rights: its kubelet client may use every kubelet API (ClusterRole
// system:kubelet-api-admin), and the front proxy's CA and name are published
// in kube-system/extension-apiserver-authentication, where aggregated API
// servers (metrics-server) read whom to trust.
func TestAPIServerIdentities(t *testing.T) {
	c := Require(t)
	ctx := context.Background()
	for _, sub := range []string{"proxy", "log", "stats", "metrics"} {
		review, err := c.Admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User:               "kube-apiserver-kubelet-client",
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: sub},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !review.Status.Allowed {
			t.Errorf("kube-apiserver-kubelet-client may not get nodes/%s: %s", sub, review.Status.Reason)
		}
	}

	cm, err := c.Admin.CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	frontProxyCA, err := os.ReadFile(filepath.Join(c.Dir, "pki", "front-proxy-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, want string }{
		{"requestheader-client-ca-file", strings.TrimSpace(string(frontProxyCA))},
		{"requestheader-allowed-names", `["front-proxy-client"]`},
		{"requestheader-username-headers", `["X-Remote-User"]`},
		{"requestheader-group-headers", `["X-Remote-Group"]`},
		{"requestheader-extra-headers-prefix", `["X-Remote-Extra-"]`},
	} {
		if got := strings.TrimSpace(cm.Data[tc.key]); got != tc.want {
			t.Errorf("extension-apiserver-authentication %s = %q, want %q", tc.key, got, tc.want)
		}
	}
}
