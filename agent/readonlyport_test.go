package agent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/client"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// An agent with the defaults, standalone, opens one TCP listener: the
// kubelet's healthz port, on loopback, answering GET /healthz only. The
// read-only endpoint is off (as the kubelet's readOnlyPort 0) and the
// kubelet API stays off without its authentication; status is on the
// control socket. The healthz port is 10248 by default, here a free one
// (tests never bind 10248). Not parallel: it counts the process's
// listeners.
func TestDefaultsListenOnLoopbackHealthzOnly(t *testing.T) {
	cfg := config.Default()
	if cfg.HealthzPort != 10248 || cfg.HealthzBindAddress != "127.0.0.1" {
		t.Errorf("default healthz port %s:%d, want the kubelet's 127.0.0.1:10248", cfg.HealthzBindAddress, cfg.HealthzPort)
	}
	before := tcpListeners(t)
	a := startDefaults(t, cfg)
	healthz := a.HealthzAddr()
	var opened []string
	for inode, addr := range tcpListeners(t) {
		if _, ok := before[inode]; !ok {
			opened = append(opened, addr)
		}
	}
	host, port, _ := net.SplitHostPort(healthz)
	p, _ := strconv.Atoi(port)
	// /proc/net/tcp's 127.0.0.1:p.
	if loopback := fmt.Sprintf("0100007F:%04X", p); host != "127.0.0.1" || len(opened) != 1 || opened[0] != loopback {
		t.Errorf("the agent listens on TCP %v with the defaults; want only the healthz port %s (%s)", opened, healthz, loopback)
	}
	if a.Addr() != "" || a.KubeletAPIAddr() != "" {
		t.Errorf("read-only endpoint %q, kubelet API %q; want both off", a.Addr(), a.KubeletAPIAddr())
	}
	get := func(path string) string {
		resp, err := http.Get("http://" + healthz + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return fmt.Sprint(resp.StatusCode, " ", string(body))
	}
	// Healthy once the first housekeeping ran (a 500 until then).
	deadline := time.Now().Add(agenttest.WaitTimeout)
	for got := get("/healthz"); got != "200 ok\n"; got = get("/healthz") {
		if time.Now().After(deadline) {
			t.Fatalf("GET /healthz on the healthz port: %q, want \"200 ok\"", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, path := range []string{"/pods", "/metrics", "/lifecycle", "/configz", "/"} {
		if got := get(path); !strings.HasPrefix(got, "404 ") {
			t.Errorf("GET %s on the healthz port: %q, want 404", path, got)
		}
	}
}

// Port 0 turns the healthz port off.
func TestHealthzPortOff(t *testing.T) {
	cfg := config.Default()
	cfg.HealthzPort = 0
	if a := startDefaults(t, cfg); a.HealthzAddr() != "" {
		t.Errorf("healthzPort 0: the healthz port listens on %s", a.HealthzAddr())
	}
}

// startDefaults runs an agent of cfg in a new root directory, its healthz
// port (if on) on a free port, until the test ends, and returns it once
// every listener is open.
func startDefaults(t *testing.T, cfg config.Config) *agent.Agent {
	t.Helper()
	root, err := os.MkdirTemp("", "pl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	cfg.RootDir = root
	cfg.StaticPodPath = filepath.Join(root, "manifests")
	a, err := agent.New(t.Context(), cfg, agent.HealthzOnAnyPort(agent.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	// Once the control socket answers, every listener is open.
	if _, _, err := client.Lifecycle(t.Context(), a.ControlSocket()); err != nil {
		t.Fatalf("status over the control socket: %v", err)
	}
	return a
}

// tcpListeners is this process's listening TCP sockets, by inode: the
// sockets among its open files that /proc/net/tcp{,6} lists in state
// LISTEN.
func tcpListeners(t *testing.T) map[string]string {
	t.Helper()
	ours := map[string]bool{}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			ours[strings.TrimSuffix(inode, "]")] = true
		}
	}
	listening := map[string]string{}
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			if f := strings.Fields(sc.Text()); len(f) > 9 && f[3] == "0A" && ours[f[9]] {
				listening[f[9]] = f[1]
			}
		}
		f.Close()
	}
	return listening
}

// The secrets of a root-only manifest: an env value, an argument, a
// probe's command and header.
const (
	secretEnv    = "env-s3cret-value"
	secretArg    = "arg-s3cret-value"
	secretProbe  = "probe-s3cret-value"
	secretHeader = "header-s3cret-value"
)

// secretPod is a manifest with secrets in its env, args, probe command
// and probe header.
const secretPod = `apiVersion: v1
kind: Pod
metadata:
  name: db
  namespace: test
  uid: 00000000-0000-4000-8000-000000000021
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"env":"` + secretEnv + `"}'
spec:
  containers:
  - name: db
    image: ` + agenttest.Image + `
    imagePullPolicy: IfNotPresent
    command: [db]
    args: ["--password=` + secretArg + `"]
    env:
    - name: DB_PASSWORD
      value: ` + secretEnv + `
    livenessProbe:
      exec: {command: [check, ` + secretProbe + `]}
    readinessProbe:
      httpGet: {port: 80, path: "/ready?token=` + secretProbe + `", httpHeaders: [{name: Authorization, value: ` + secretHeader + `}]}
`

// Acceptance of issue 21: with the read-only endpoint turned on, uid
// 65534 reads /pods, which names the pod and its env variable, and
// carries none of the secrets of its root-only (0600) manifest.
func TestLocalUserReadsNoSecretOnReadOnlyPort(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: needs root: the agent runs as root and the reader as uid 65534")
	}
	h := agenttest.Start(t)
	h.Write("db.yaml", secretPod)
	if err := os.Chmod(h.Path("db.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.WaitPods("db known", func(pods map[types.UID]api.PodInfo) bool {
		_, ok := pods["00000000-0000-4000-8000-000000000021"]
		return ok
	})
	got := attack(t, h.Agent.Addr(), h.Agent.ControlSocket())
	code, body, _ := strings.Cut(got["tcp GET /pods"], " ")
	if code != "200" {
		t.Fatalf("uid 65534's GET /pods: %s", got["tcp GET /pods"])
	}
	var pods v1.PodList
	if err := json.Unmarshal([]byte(body), &pods); err != nil || len(pods.Items) != 1 {
		t.Fatalf("uid 65534's GET /pods: %v, %d pods:\n%s", err, len(pods.Items), body)
	}
	if c := pods.Items[0].Spec.Containers[0]; c.Name != "db" || len(c.Env) != 1 || c.Env[0].Name != "DB_PASSWORD" {
		t.Errorf("/pods lost what it may show: %+v", c)
	}
	for _, secret := range []string{secretEnv, secretArg, secretProbe, secretHeader} {
		if strings.Contains(body, secret) {
			t.Errorf("uid 65534 read %q on GET /pods", secret)
		}
	}
	if code, _, _ := h.Get("/pods"); code != http.StatusOK {
		t.Errorf("root's GET /pods: %d", code)
	}
}
