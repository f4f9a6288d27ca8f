package clustertest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartPrivate starts a control plane of the test's own with
// tools/cluster-up.sh, for tests that stop or restart the apiserver (the
// shared one serves other tests meanwhile), and stops it at cleanup. It
// needs the shared one (its binaries are built): without it the test
// skips. cluster-up.sh reads the test's environment: a test that needs
// short-lived node certificates sets PODLIFE_CLUSTER_SIGNING_DURATION (say
// 3m) with t.Setenv before calling it.
func StartPrivate(t testing.TB) *Cluster {
	t.Helper()
	Require(t)
	tools := filepath.Join(repoRoot(t), "tools")
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(tools, "cluster-up.sh"))
	cmd.Env = append(os.Environ(), EnvDir+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if _, err := cmd.Output(); err != nil {
		t.Fatalf("tools/cluster-up.sh: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		if out, err := exec.Command(filepath.Join(tools, "cluster-down.sh"), dir).CombinedOutput(); err != nil {
			t.Errorf("tools/cluster-down.sh: %v\n%s", err, out)
		}
	})
	t.Setenv(EnvDir, dir)
	return Require(t)
}

// repoRoot is the directory of the module's go.mod, above the test's.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// apiserverPID is the running apiserver's process ID.
func (c *Cluster) apiserverPID(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.Dir, "kube-apiserver.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("kube-apiserver.pid: %v", err)
	}
	return pid
}

// PauseAPIServer stops the apiserver (SIGSTOP) for d, calling whileDown
// meanwhile, then resumes it: an outage in which connections hang rather
// than fail, as in a network partition.
func (c *Cluster) PauseAPIServer(t testing.TB, d time.Duration, whileDown func()) {
	t.Helper()
	pid := c.apiserverPID(t)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Errorf("resume the apiserver: %v", err)
		}
	}()
	end := time.Now().Add(d)
	whileDown()
	time.Sleep(time.Until(end))
}

// RestartAPIServer stops the apiserver (SIGTERM, as a restart by its
// supervisor does; SIGKILL if it is still there after 15 s, as it may be:
// this apiserver has been seen to hang in its shutdown), calls whileDown, and starts it again with the same
// command line, log and PID file, so cluster-down.sh still stops it. It
// returns once the new one answers /readyz.
func (c *Cluster) RestartAPIServer(t testing.TB, whileDown func()) {
	t.Helper()
	pid := c.apiserverPID(t)
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	stopProcess(t, pid)
	whileDown()
	logFile, err := os.OpenFile(filepath.Join(c.Dir, "kube-apiserver.log"), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("restart the apiserver: %v", err)
	}
	go func() { _ = cmd.Wait() }() // reaps it when cluster-down.sh stops it
	if err := os.WriteFile(filepath.Join(c.Dir, "kube-apiserver.pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := c.Admin.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(t.Context())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(errors.Join(errors.New("the restarted apiserver is not ready after 60 s"), err))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alive reports whether process pid runs: it exists and is no zombie (an
// orphaned apiserver's parent is init, which in a container may never
// reap it).
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

// stopProcess sends pid SIGTERM, then SIGKILL after 15 s, and waits until
// it is gone.
func stopProcess(t testing.TB, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	killed := false
	for alive(pid) {
		switch since := time.Since(start); {
		case since > 15*time.Second && !killed:
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = true
		case since > 45*time.Second:
			t.Fatalf("process %d outlived SIGKILL by 30 s", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
