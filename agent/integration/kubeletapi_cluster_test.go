package integration_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
)

// The kubelet API of an agent on containerd, joined to the control plane
// (its client CA the cluster's, authorization by SubjectAccessReview):
// the Node advertises its port; `kubectl logs` (--tail, --timestamps, -f,
// --since), `kubectl exec -i` (stdin, exit code), `kubectl attach` and
// `kubectl port-forward` (a GET through it) reach it through the API
// server, which presents its kubelet client certificate;
// a service account's token without RBAC gets 403, one bound to
// nodes/proxy gets in; a client certificate of another CA gets 401.
func TestContainerdClusterKubeletAPI(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	port := freePort(t)
	a := joinContainerd(e, n, func(cfg *config.Config) {
		cfg.Port = port
		cfg.ClientCAFile = filepath.Join(n.c.Dir, "pki", "ca.crt")
	})
	if a.KubeletAPIAddr() == "" {
		t.Fatalf("the kubelet API is off:\n%s", a.Logs.String())
	}
	ctx := t.Context()
	node, err := n.c.Admin.CoreV1().Nodes().Get(ctx, n.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Status.DaemonEndpoints.KubeletEndpoint.Port; got != int32(port) {
		t.Errorf("the Node advertises kubelet port %d, want %d", got, port)
	}

	n.kubectlApply(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: server, namespace: %s}
spec:
  nodeSelector: {kubernetes.io/hostname: %s}
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    imagePullPolicy: Never
    command: ["sh", "-c", %q]
`, n.ns, n.node, critest.BusyboxImage, serverPodScript))
	pod := n.waitPhase("server", v1.PodRunning)
	e.RemoveAtEnd(string(pod.UID))

	t.Run("kubectl logs", func(t *testing.T) {
		agenttest.CtrdEventually(t, "kubectl logs --tail=1 shows a tick", func() (bool, string) {
			out, err := n.c.Kubectl(t, "logs", "server", "-n", n.ns, "--tail=1")
			return err == nil && strings.HasPrefix(out, "tick ") && strings.Count(out, "\n") == 1, fmt.Sprint(out, err)
		})
		out, err := n.c.Kubectl(t, "logs", "server", "-n", n.ns, "--tail=1", "--timestamps")
		if ts, rest, _ := strings.Cut(out, " "); err != nil || !strings.HasPrefix(rest, "tick ") || !strings.Contains(ts, "T") {
			t.Errorf("kubectl logs --timestamps --tail=1: %v %q, want a time and a tick", err, out)
		}
	})

	t.Run("kubectl exec", func(t *testing.T) {
		out, err := n.c.KubectlStdin(t, "from stdin\n", "exec", "-i", "server", "-n", n.ns, "--", "sh", "-c", "cat; echo done; exit 3")
		if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(out, "from stdin\ndone\n") {
			t.Errorf("kubectl exec -i: %v, %q; want the input back, done, and exit status 3", err, out)
		}
	})

	kubectl := func(ctx context.Context, args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, filepath.Join(n.c.Bin(t), "kubectl"), append([]string{"--kubeconfig", n.c.AdminKubeconfig, "-n", n.ns}, args...)...)
	}

	t.Run("kubectl logs -f --since", func(t *testing.T) {
		following, stop := context.WithCancel(ctx)
		defer stop()
		// Two ticks more than the first one seen: the follow goes on.
		seen := &watchWriter{want: "\n", found: func() {}}
		cmd := kubectl(following, "logs", "-f", "--since=1h", "server")
		cmd.Stdout, cmd.Stderr = seen, seen
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { stop(); _ = cmd.Wait() }()
		var first string
		agenttest.CtrdEventually(t, "kubectl logs -f prints new ticks", func() (bool, string) {
			lines := strings.Split(strings.TrimSpace(seen.String()), "\n")
			if first == "" && seen.ok() {
				first = lines[len(lines)-1]
			}
			return first != "" && lines[len(lines)-1] != first && strings.HasPrefix(lines[len(lines)-1], "tick "), seen.String()
		})
	})

	t.Run("kubectl attach", func(t *testing.T) {
		attached, detach := context.WithCancel(ctx)
		defer detach()
		seen := &watchWriter{want: "tick", found: detach}
		cmd := kubectl(attached, "attach", "server", "-c", "app")
		cmd.Stdout, cmd.Stderr = seen, seen
		err := cmd.Run()
		if !seen.ok() {
			t.Errorf("kubectl attach: %v; printed %q, want the container's ticks", err, seen.String())
		}
	})

	t.Run("kubectl port-forward", func(t *testing.T) {
		forwarding, stop := context.WithCancel(ctx)
		defer stop()
		local := &watchWriter{want: " -> 8080", found: func() {}}
		cmd := kubectl(forwarding, "port-forward", "pod/server", "--address", "127.0.0.1", ":8080")
		cmd.Stdout, cmd.Stderr = local, local
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { stop(); _ = cmd.Wait() }()
		agenttest.CtrdEventually(t, "kubectl port-forward says where it listens", func() (bool, string) { return local.ok(), local.String() })
		addr := regexp.MustCompile(`127\.0\.0\.1:(\d+) -> 8080`).FindStringSubmatch(local.String())
		if addr == nil {
			t.Fatalf("kubectl port-forward printed %q", local.String())
		}
		resp, err := http.Get("http://127.0.0.1:" + addr[1] + "/index.html")
		if err != nil {
			t.Fatalf("GET through kubectl port-forward: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "hello-podlife\n" {
			t.Errorf("GET through kubectl port-forward: %d %q, want 200 hello-podlife", resp.StatusCode, body)
		}
	})

	// Tokens of service accounts, against the kubelet API directly.
	caller := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed
	defer caller.CloseIdleConnections()
	get := func(t *testing.T, bearer string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+a.KubeletAPIAddr()+"/pods", nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := caller.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	token := func(t *testing.T, sa string) string {
		t.Helper()
		if _, err := n.c.Admin.CoreV1().ServiceAccounts(n.ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := n.c.Admin.CoreV1().ServiceAccounts(n.ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}

	t.Run("service account without RBAC", func(t *testing.T) {
		code, body := get(t, token(t, "nobody"))
		want := "Forbidden (user=system:serviceaccount:" + n.ns + ":nobody, verb=get, resource=nodes, subresource(s)=[pods proxy])"
		if code != http.StatusForbidden || !strings.Contains(body, want) {
			t.Errorf("GET /pods as a service account without RBAC: %d %q, want 403 %q", code, body, want)
		}
	})

	t.Run("service account bound to nodes/proxy", func(t *testing.T) {
		tok := token(t, "prober")
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "podlife-test-nodes-proxy-" + n.ns},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes/proxy"}, Verbs: []string{"get", "create"}}},
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prober", Namespace: n.ns}},
		}
		rbac := n.c.Admin.RbacV1()
		if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{}) })
		if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = rbac.ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
		})
		code, body := get(t, tok)
		if code != http.StatusOK || !strings.Contains(body, `"name":"server"`) {
			t.Errorf("GET /pods as a service account bound to nodes/proxy: %d %.300q, want 200 and the pod", code, body)
		}
	})

	t.Run("client certificate of another CA", func(t *testing.T) {
		other := newClientCA(t, t.TempDir()).restConfig(t, a.KubeletAPIAddr(), "system:kube-apiserver")
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, //nolint:gosec // self-signed
			Certificates: []tls.Certificate{mustPair(t, other.CertData, other.KeyData)}}}}
		defer client.CloseIdleConnections()
		resp, err := client.Get("https://" + a.KubeletAPIAddr() + "/pods")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /pods with a client certificate of another CA: %d, want 401", resp.StatusCode)
		}
		if code, _ := get(t, ""); code != http.StatusUnauthorized {
			t.Errorf("GET /pods without credentials: %d, want 401", code)
		}
	})
}

func mustPair(t testing.TB, certPEM, keyPEM []byte) tls.Certificate {
	t.Helper()
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
