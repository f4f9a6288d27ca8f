package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/client"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// nobody is the unprivileged user the attacker runs as.
const nobody = 65534

// Environment of the attacker process: the agent's TCP address and its
// control socket. Set, they make TestAttackerHelper the attacker.
const (
	attackAddrEnv   = "PODLIFE_TEST_ATTACK_ADDR"
	attackSocketEnv = "PODLIFE_TEST_ATTACK_SOCKET"
)

// attackPrefix starts the attacker's line of results on its output.
const attackPrefix = "ATTACK "

// Acceptance of issue 10: an agent run by root, another local user (uid
// 65534) tries to stop it over the TCP port, as a page of another site
// would, and over the control socket; all fail, and the agent runs on.
// Root's 'podlife shutdown' then stops it, and the log says who asked.
func TestLocalUserCannotStopNode(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent runs as root and the attacker as uid 65534")
	}
	h := agenttest.Start(t, withShutdown())
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1), Grace: 30}
	h.WritePod(web)
	h.WaitRunning(web.UID)
	socket := h.Agent.ControlSocket()
	attackFails(t, h.Agent)

	// Should the socket's mode ever let others in, the agent still
	// refuses any peer but its own user and root.
	if err := os.Chmod(socket, 0o666); err != nil {
		t.Fatal(err)
	}
	got := attack(t, h.Agent.Addr(), socket)
	for name, want := range map[string]string{
		"socket connect":        "connected",
		"socket POST /shutdown": "403 Forbidden: uid 65534 may not control this agent",
	} {
		if !strings.Contains(got[name], want) {
			t.Errorf("socket opened to all: %s: %q, want %q in it", name, got[name], want)
		}
	}
	if lines := h.LogLines("control request refused", "path=/shutdown", "uid=65534"); len(lines) == 0 {
		t.Error("no log line names the refused peer's uid")
	}
	if h.Agent.ShutdownRequested() {
		t.Fatal("the attacker started a node shutdown over the socket opened to all")
	}
	if code, _, body := h.Get("/healthz"); code != http.StatusOK {
		t.Fatalf("after the attacks /healthz: %d %s", code, body)
	}

	answer, err := client.ShutdownNode(t.Context(), socket)
	if err != nil {
		t.Fatalf("root's shutdown: %v", err)
	}
	if answer != "node shutdown started\n" {
		t.Errorf("root's shutdown: answer %q", answer)
	}
	if err := client.WaitAgentExited(t.Context(), socket); err != nil {
		t.Errorf("WaitAgentExited: %v", err)
	}
	if err := h.Wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkShutdownStatus(t, h, web)
	if lines := h.LogLines("control request", "path=/shutdown", "uid=0", "pid="+strconv.Itoa(os.Getpid())); len(lines) == 0 {
		t.Error("no log line names root's shutdown request with its uid and pid")
	}
	if _, err := os.Lstat(socket); !os.IsNotExist(err) {
		t.Errorf("the control socket is left after the agent exited: %v", err)
	}
}

// attackFails checks that uid 65534 can stop a running agent neither over
// its TCP port nor over its control socket.
func attackFails(t *testing.T, a *agent.Agent) {
	t.Helper()
	socket := a.ControlSocket()
	// The directories down to the socket may be searched by others (0755
	// is accepted): the socket's own mode is what keeps them out.
	for dir := filepath.Dir(socket); dir != os.TempDir() && dir != "/"; dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(socket); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("control socket %s: %v %v, want mode 0600", socket, fi.Mode(), err)
	}
	got := attack(t, a.Addr(), socket)
	for name, want := range map[string]string{
		"uid":                           strconv.Itoa(nobody),
		"tcp POST /shutdown":            "405 ",
		"tcp form POST of another site": "405 ",
		// Read, as from the kubelet's read-only port (no Host check):
		// the pods without env values, commands or args.
		"tcp GET /pods with a rebinding host": "200 ",
		"socket connect":                      "permission denied",
		"socket POST /shutdown":               "permission denied",
	} {
		if !strings.Contains(got[name], want) {
			t.Errorf("%s: %q, want %q in it", name, got[name], want)
		}
	}
	if a.ShutdownRequested() {
		t.Fatal("the attacker started a node shutdown")
	}
}

// The same against real containerd: the pod's container keeps running
// through the attacks, and root's shutdown stops it.
func TestContainerdLocalUserCannotStopNode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent runs as root and the attacker as uid 65534")
	}
	e := agenttest.NewCtrdEnv(t)
	podUID := e.NewUID()
	a := e.StartAgent(filepath.Join(e.Dir, "manifests"), func(c *config.Config) {
		c.ShutdownGracePeriod.Duration = 4 * time.Second
		c.ShutdownGracePeriodCriticalPods.Duration = 2 * time.Second
	})
	a.WritePod(agenttest.CtrdPod{Name: "web", UID: podUID, Grace: 30, Containers: []agenttest.CtrdContainer{agenttest.CtrdTrapper("server")}})
	a.WaitRunning(podUID, 1)
	attackFails(t, a.Agent)
	if running := e.RunningContainers(podUID); len(running) != 1 {
		t.Fatalf("after the attacks the pod's containers %v run, want server", running)
	}

	if _, err := client.ShutdownNode(t.Context(), a.ControlSocket()); err != nil {
		t.Fatalf("root's shutdown: %v", err)
	}
	if err := a.Wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if running := e.RunningContainers(podUID); len(running) != 0 {
		t.Errorf("after root's shutdown containers %v still run", running)
	}
	if !strings.Contains(a.Logs.String(), "uid=0") {
		t.Error("no log line names root's uid")
	}
}

// attack runs TestAttackerHelper as uid 65534 against the agent and
// returns what each of its attempts got.
func attack(t *testing.T, addr, socket string) map[string]string {
	t.Helper()
	cmd := exec.Command(attackerBinary(t), "-test.run=^TestAttackerHelper$", "-test.count=1", "-test.timeout=2m")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/", attackAddrEnv + "=" + addr, attackSocketEnv + "=" + socket}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("attacker: %v\n%s", err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), attackPrefix); ok {
			got := map[string]string{}
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("attacker's results: %v\n%s", err, out)
			}
			t.Logf("the attacker got %q", got)
			return got
		}
	}
	t.Fatalf("attacker printed no results:\n%s", out)
	return nil
}

// attackerBinary is a copy of the test binary that uid 65534 may run: the
// go command builds it in a directory only root may enter.
func attackerBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "plattack")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := dir + "/agent.test"
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestAttackerHelper is the attacker of TestLocalUserCannotStopNode, in a
// process of its own: it tries to stop the agent every way it can reach,
// and prints what each attempt got.
func TestAttackerHelper(t *testing.T) {
	addr, socket := os.Getenv(attackAddrEnv), os.Getenv(attackSocketEnv)
	if addr == "" || socket == "" {
		t.Skip("the attacker process of TestLocalUserCannotStopNode")
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{"uid": strconv.Itoa(os.Getuid())}
	send := func(name, method, path, host string, header http.Header) {
		req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader("confirm=yes"))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := agenttest.HTTPClient.Do(req)
		if err != nil {
			got[name] = "error: " + err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got[name] = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	send("tcp POST /shutdown", http.MethodPost, "/shutdown", "", nil)
	// What a page of evil.example posts once its name resolves to
	// 127.0.0.1 (DNS rebinding).
	send("tcp form POST of another site", http.MethodPost, "/shutdown", "evil.example:"+port, http.Header{
		"Origin": {"http://evil.example:" + port}, "Content-Type": {"application/x-www-form-urlencoded"},
	})
	send("tcp GET /pods with a rebinding host", http.MethodGet, "/pods", "evil.example:"+port, nil)
	send("tcp GET /pods", http.MethodGet, "/pods", "", nil)
	if c, err := net.Dial("unix", socket); err != nil {
		got["socket connect"] = "error: " + err.Error()
	} else {
		c.Close()
		got["socket connect"] = "connected"
	}
	if _, err := client.ShutdownNode(context.Background(), socket); err != nil {
		got["socket POST /shutdown"] = "error: " + err.Error()
	} else {
		got["socket POST /shutdown"] = "accepted"
	}
	line, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(attackPrefix + string(line))
}
