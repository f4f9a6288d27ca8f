package integration_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/agent/kubeletserver"
)

// serverPodScript serves hello-podlife on port 8080 (busybox httpd) and
// prints a numbered tick every 200 ms.
const serverPodScript = `mkdir -p /www && echo hello-podlife > /www/index.html && httpd -p 8080 -h /www && i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done`

// kubeletAPIAgent runs an agent on containerd with its kubelet API on a
// free loopback port, trusting ca's client certificates (standalone:
// AlwaysAllow), and the pod "server" running serverPodScript.
func kubeletAPIAgent(t *testing.T) (*agenttest.CtrdAgent, *clientCA, string) {
	e := agenttest.NewCtrdEnv(t)
	ca := newClientCA(t, e.Dir)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, func(c *config.Config) {
		c.Port, c.Address = freePort(t), "127.0.0.1"
		c.ClientCAFile, c.AuthorizationMode = ca.File, kubeletserver.ModeAlwaysAllow
	})
	if a.KubeletAPIAddr() == "" {
		t.Fatalf("the kubelet API is off:\n%s", a.Logs.String())
	}
	uid := e.NewUID()
	writeManifest(t, manifests, "server.yaml", logPod("server", uid, "Always", serverPodScript))
	a.WaitRunning(uid, 1)
	return a, ca, agenttest.CtrdNamespace + "/server-" + a.Node
}

// streamURL is the kubelet API's URL of path with query.
func streamURL(cfg *rest.Config, path string, query url.Values) *url.URL {
	u, _ := url.Parse(cfg.Host + path)
	u.RawQuery = query.Encode()
	return u
}

// exitCode is the exit code a remote command's error carries (0: none).
func exitCode(err error) (int, bool) {
	var ce utilexec.CodeExitError
	if errors.As(err, &ce) {
		return ce.Code, true
	}
	return 0, err == nil
}

// Through the kubelet API on containerd: exec with a TTY and stdin (exit
// code), exec with separate streams over SPDY and over the v5 WebSocket
// protocol, attach, port-forward over SPDY and over a WebSocket tunnel
// with a GET through it, run, and the container's log; a client without
// a certificate of the client CA gets 401.
func TestContainerdKubeletAPI(t *testing.T) {
	a, ca, pod := kubeletAPIAgent(t)
	cfg := ca.restConfig(t, a.KubeletAPIAddr(), "system:kube-apiserver")
	ctx, cancel := context.WithTimeout(t.Context(), agenttest.CtrdTimeout)
	defer cancel()

	t.Run("exec tty", func(t *testing.T) {
		u := streamURL(cfg, "/exec/"+pod+"/app", url.Values{"command": {"sh"}, "input": {"1"}, "output": {"1"}, "tty": {"1"}})
		exec, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
		if err != nil {
			t.Fatal(err)
		}
		// Typed as at a terminal: the next line once the shell answered.
		stdin, typing := io.Pipe()
		answered := make(chan struct{})
		out := &watchWriter{want: "answer=42", found: func() { close(answered) }}
		go func() {
			_, _ = io.WriteString(typing, "echo answer=$((6*7)); tty\n")
			select {
			case <-answered:
				_, _ = io.WriteString(typing, "exit 3\n")
			case <-ctx.Done():
			}
		}()
		err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: out, Tty: true})
		_ = typing.Close()
		if code, _ := exitCode(err); code != 3 {
			t.Errorf("exec -it sh: %v, want exit code 3; output %q", err, out.String())
		}
		if !strings.Contains(out.String(), "answer=42") || !strings.Contains(out.String(), "/dev/pts/") {
			t.Errorf("exec -it sh printed %q, want answer=42 and a /dev/pts terminal", out.String())
		}
	})

	t.Run("exec streams", func(t *testing.T) {
		u := streamURL(cfg, "/exec/"+pod+"/app", url.Values{"command": {"sh", "-c", "cat; echo oops >&2; exit 5"}, "input": {"1"}, "output": {"1"}, "error": {"1"}})
		exec, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader("from stdin\n"), Stdout: &stdout, Stderr: &stderr})
		if code, _ := exitCode(err); code != 5 || stdout.String() != "from stdin\n" || stderr.String() != "oops\n" {
			t.Errorf("exec: %v, stdout %q, stderr %q; want exit 5, the input back, oops", err, stdout.String(), stderr.String())
		}
	})

	t.Run("exec websocket", func(t *testing.T) {
		// The v5 WebSocket protocol, which the server translates to the
		// runtime's SPDY.
		u := streamURL(cfg, "/exec/"+pod+"/app", url.Values{"command": {"sh", "-c", "cat; echo oops >&2; exit 4"}, "input": {"1"}, "output": {"1"}, "error": {"1"}})
		exec, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader("over websocket\n"), Stdout: &stdout, Stderr: &stderr})
		if code, _ := exitCode(err); code != 4 || stdout.String() != "over websocket\n" || stderr.String() != "oops\n" {
			t.Errorf("exec over WebSocket: %v, stdout %q, stderr %q; want exit 4, the input back, oops", err, stdout.String(), stderr.String())
		}
	})

	t.Run("attach", func(t *testing.T) {
		u := streamURL(cfg, "/attach/"+pod+"/app", url.Values{"output": {"1"}, "error": {"1"}})
		exec, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
		if err != nil {
			t.Fatal(err)
		}
		attached, detach := context.WithCancel(ctx)
		defer detach()
		seen := &watchWriter{want: "tick", found: detach}
		err = exec.StreamWithContext(attached, remotecommand.StreamOptions{Stdout: seen, Stderr: io.Discard})
		if !seen.ok() {
			t.Errorf("attach: %v; saw %q, want the container's ticks", err, seen.String())
		}
	})

	// Port-forward over SPDY, and over a WebSocket tunnelling SPDY (what
	// kubectl tries first).
	// Each forwards a free local port to the pod's 8080.
	type forwarder func(t *testing.T, u *url.URL, stop, ready chan struct{}) (*portforward.PortForwarder, error)
	local, ports := []string{"127.0.0.1"}, []string{"0:8080"}
	overSPDY := func(t *testing.T, u *url.URL, stop, ready chan struct{}) (*portforward.PortForwarder, error) {
		transport, upgrader, err := spdy.RoundTripperFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", u)
		return portforward.NewOnAddresses(d, local, ports, stop, ready, io.Discard, io.Discard)
	}
	overWebSocket := func(t *testing.T, u *url.URL, stop, ready chan struct{}) (*portforward.PortForwarder, error) {
		d, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return portforward.NewOnAddresses(d, local, ports, stop, ready, io.Discard, io.Discard)
	}
	for name, forward := range map[string]forwarder{"port-forward": overSPDY, "port-forward websocket": overWebSocket} {
		t.Run(name, func(t *testing.T) {
			stop, ready := make(chan struct{}), make(chan struct{})
			fw, err := forward(t, streamURL(cfg, "/portForward/"+pod, nil), stop, ready)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- fw.ForwardPorts() }()
			defer func() { close(stop); <-done }()
			select {
			case <-ready:
			case err := <-done:
				t.Fatalf("port-forward ended: %v", err)
			case <-ctx.Done():
				t.Fatal("port-forward: not ready in time")
			}
			ports, err := fw.GetPorts()
			if err != nil || len(ports) != 1 {
				t.Fatalf("port-forward ports %v, %v", ports, err)
			}
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/index.html", ports[0].Local))
			if err != nil {
				t.Fatalf("GET through the port-forward: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != "hello-podlife\n" {
				t.Errorf("GET through the port-forward: %d %q, want 200 hello-podlife", resp.StatusCode, body)
			}
		})
	}

	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	t.Run("run", func(t *testing.T) {
		resp, err := client.Post(cfg.Host+"/run/"+pod+"/app?cmd="+url.QueryEscape("echo ran here"), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "ran here\n" {
			t.Errorf("POST /run: %d %q, want 200 and the output", resp.StatusCode, body)
		}
	})

	t.Run("logs", func(t *testing.T) {
		resp, err := client.Get(cfg.Host + "/containerLogs/" + pod + "/app?tailLines=1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "tick ") || strings.Count(string(body), "\n") != 1 {
			t.Errorf("GET /containerLogs?tailLines=1: %d %q, want one tick", resp.StatusCode, body)
		}
	})

	t.Run("no client certificate", func(t *testing.T) {
		anon := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed
		defer anon.CloseIdleConnections()
		resp, err := anon.Get(cfg.Host + "/pods")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /pods without credentials: %d, want 401", resp.StatusCode)
		}
	})
}

// watchWriter records what is written and calls found once want appears.
type watchWriter struct {
	want  string
	found func()
	mu    sync.Mutex
	buf   bytes.Buffer
	once  sync.Once
	seen  bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.seen = true
		w.once.Do(w.found)
	}
	return len(p), nil
}

func (w *watchWriter) ok() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
