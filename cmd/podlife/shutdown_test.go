package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
)

// podlife shutdown stops an agent over its control socket and, with
// --wait, returns once the agent exited.
func TestShutdownCommand(t *testing.T) {
	// Short: a unix socket path has at most 107 bytes.
	root, err := os.MkdirTemp("", "pl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	cfg := config.Default()
	cfg.RootDir = root
	// Tests in parallel never bind the kubelet's healthz port 10248.
	cfg.HealthzPort = 0
	cfg.ShutdownGracePeriod.Duration = 2 * time.Second                                          // graceful node shutdown enabled
	a, err := agent.New(t.Context(), cfg, agent.Options{NoLogind: true, ReadOnlyAnyPort: true}) // the machine's logind is no test's
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- a.Run(context.Background()) }()

	out, err := runShutdown(t, "--root-dir", root, "--wait", "1m")
	if err != nil {
		t.Fatalf("podlife shutdown: %v", err)
	}
	if out != "node shutdown started\nagent exited\n" {
		t.Errorf("podlife shutdown printed %q", out)
	}
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after podlife shutdown")
	}
}

func TestShutdownCommandErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), api.ControlSocketName)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no agent", []string{"--socket", missing}, []string{missing, "no such file"}},
		{"no agent in the root directory", []string{"--root-dir", filepath.Dir(missing)}, []string{missing, "no such file"}},
		{"both root directory and socket", []string{"--root-dir", "/x", "--socket", "/y"}, []string{"root-dir", "socket"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runShutdown(t, tc.args...)
			for _, want := range tc.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("podlife shutdown %v: %v, want an error mentioning %q", tc.args, err, want)
				}
			}
		})
	}
}

// runShutdown runs podlife shutdown with args and returns its output.
func runShutdown(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := shutdownCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SilenceUsage = true
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}
