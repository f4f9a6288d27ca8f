package main

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/internal/logindtest"
)

// SIGTERM and SIGINT stop the agent (systemctl stop or restart) and run no
// node shutdown, even with shutdown grace periods configured: runAgent
// returns nil, says what becomes of the pods, and releases logind's
// inhibitor lock, which it took on the system bus that
// DBUS_SYSTEM_BUS_ADDRESS names. The signals are sent to the test process
// itself, once runAgent catches them (it holds the lock by then).
func TestRunAgentStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			bus := logindtest.StartBus(t)
			logind := logindtest.StartLogind(t, bus.Address, time.Minute)
			t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.Address)
			root, err := os.MkdirTemp("", "pl") // short: a unix socket path has at most 107 bytes
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(root) })
			cfg := config.Default()
			cfg.RootDir = root
			// Tests in parallel never bind the kubelet's healthz port 10248.
			cfg.HealthzPort = 0
			cfg.ShutdownGracePeriod.Duration = 10 * time.Second // graceful node shutdown enabled
			logs := captureStderr(t)

			ran := make(chan error, 1)
			go func() { ran <- runAgent(context.Background(), cfg) }()
			logind.WaitLocks("the agent took logind's lock", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 1 })
			if err := syscall.Kill(os.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-ran:
				if err != nil {
					t.Errorf("runAgent after %v: %v", sig, err)
				}
			case <-time.After(time.Minute):
				t.Fatalf("runAgent did not return within a minute of %v", sig)
			}
			logind.WaitLocks("the lock released as the agent exited", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 0 })
			out := logs()
			if !strings.Contains(out, "agent stopping; its pods end with it") {
				t.Errorf("the agent did not say it stops and what becomes of its pods:\n%s", out)
			}
			if strings.Contains(out, "node shutdown:") || strings.Contains(out, "Graceful node shutdown started") {
				t.Errorf("%v ran a node shutdown:\n%s", sig, out)
			}
		})
	}
}

// captureStderr sends os.Stderr (where runAgent logs) to a file until the
// test ends; the function returned reads what was written.
func captureStderr(t *testing.T) func() string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = f
	t.Cleanup(func() {
		os.Stderr = saved
		f.Close()
	})
	return func() string {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}
