// Package logindtest runs a private D-Bus (Debian's dbus-daemon) with a
// small systemd-logind stand-in on it, for the tests of agent/shutdown/logind
// and of the agent's graceful node shutdown (the kubelet tests its
// pkg/kubelet/nodeshutdown/systemd against a fake connection instead).
package logindtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// busConfig is a session-like bus: anyone who can reach the socket may own
// any name and call anything. The socket is in a directory of the test's
// own.
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// Bus is a private dbus-daemon.
type Bus struct {
	t       testing.TB
	Address string
	config  string
	cmd     *exec.Cmd
}

// StartBus starts a private dbus-daemon; it is stopped at cleanup. The
// test is skipped when dbus-daemon is absent.
func StartBus(t testing.TB) *Bus {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Skip("SKIPPED: no dbus-daemon (Debian package dbus-daemon): " + err.Error())
	}
	// Short: a unix socket path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "dbus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b := &Bus{t: t, config: filepath.Join(dir, "bus.conf")}
	if err := os.WriteFile(b.config, fmt.Appendf(nil, busConfig, filepath.Join(dir, "bus")), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	b.Address = b.start()
	return b
}

// Restart stops the daemon and starts a new one on the same socket: its
// clients lose their connections.
func (b *Bus) Restart() {
	b.t.Helper()
	b.Stop()
	b.start()
}

// Stop stops the daemon.
func (b *Bus) Stop() {
	if b.cmd != nil {
		_ = b.cmd.Process.Kill()
		_ = b.cmd.Wait()
		b.cmd = nil
	}
}

func (b *Bus) start() string {
	b.t.Helper()
	cmd := exec.Command("dbus-daemon", "--config-file="+b.config, "--print-address", "--nofork")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.cmd = cmd
	address := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		address <- strings.TrimSpace(line)
	}()
	select {
	case a := <-address:
		if a == "" {
			b.t.Fatalf("dbus-daemon printed no address: %s", stderr.String())
		}
		return a
	case <-time.After(30 * time.Second):
		b.t.Fatalf("dbus-daemon printed no address within 30s: %s", stderr.String())
	}
	return ""
}
