package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
)

// lifecycleJSON is an agent's /lifecycle: a pod restarted twice (once in
// its init container), one waiting for its full name, and a bad manifest.
const lifecycleJSON = `{
  "pods": [
    {"uid": "00000000-0000-4000-8000-000000000001", "namespace": "test", "name": "web-node1", "config": "orphan",
     "lifecycle": "Terminating", "phase": "Running",
     "initContainers": [{"name": "setup", "state": "terminated", "exitCode": 0, "restarts": 1}],
     "containers": [{"name": "app", "state": "running", "restarts": 1}]},
    {"uid": "00000000-0000-4000-8000-000000000002", "namespace": "test", "name": "web-node1", "config": "desired",
     "lifecycle": "Waiting", "waitingFor": {"uid": "00000000-0000-4000-8000-000000000001"}}
  ],
  "manifestErrors": [{"path": "/etc/podlife/pods/broken.yaml", "error": "invalid YAML or JSON: line 4"}]
}
`

// podlife status prints /lifecycle as a table with a restart count per
// pod, whom a waiting pod waits for, and the manifest errors; --json
// prints the endpoint's JSON as it came.
func TestStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/lifecycle" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(lifecycleJSON))
	}))
	defer srv.Close()
	address := strings.TrimPrefix(srv.URL, "http://")
	tests := []struct {
		args []string
		want []string // lines, each with its words in order
	}{
		{[]string{"--address", address}, []string{
			"NAMESPACE NAME UID CONFIG LIFECYCLE PHASE RESTARTS REASON CONTAINERS",
			"test web-node1 …00000001 orphan Terminating Running 2 - init:setup=terminated(0),app=running",
			"test web-node1 …00000002 desired Waiting - 0 waiting for its full name, held by …00000001 (its manifest is gone) -",
			"MANIFEST ERROR",
			"/etc/podlife/pods/broken.yaml invalid YAML or JSON: line 4",
		}},
		{[]string{"--address", address, "--json"}, strings.Split(strings.TrimSpace(lifecycleJSON), "\n")},
	}
	for _, tt := range tests {
		cmd := statusCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("status %v: %v", tt.args, err)
		}
		var got []string
		for line := range strings.Lines(out.String()) {
			if f := strings.Fields(line); len(f) > 0 {
				got = append(got, strings.Join(f, " "))
			}
		}
		for i, w := range tt.want {
			if w = strings.Join(strings.Fields(w), " "); i >= len(got) || got[i] != w {
				t.Errorf("status %v: line %d is %q, want %q\n%s", tt.args, i, at(got, i), w, out.String())
			}
		}
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// podlife status asks the control socket of an agent with the defaults,
// which open no TCP endpoint; a socket nobody answers on is an error
// naming it.
func TestStatusOverControlSocket(t *testing.T) {
	// Short: a unix socket path has at most 107 bytes.
	root, err := os.MkdirTemp("", "pl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	manifests := filepath.Join(root, "manifests")
	if err := os.Mkdir(manifests, 0o700); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(manifests, "broken.yaml")
	if err := os.WriteFile(broken, []byte("kind: Pod\nmetadata: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.RootDir = root
	cfg.StaticPodPath = manifests
	// Tests in parallel never bind the kubelet's healthz port 10248.
	cfg.HealthzPort = 0
	a, err := agent.New(t.Context(), cfg, agent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Addr() != "" {
		t.Errorf("an agent with the defaults serves the read-only endpoint on %s", a.Addr())
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

	for _, args := range [][]string{{"--root-dir", root}, {"--socket", api.ControlSocket(root), "--json"}} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			out, err := runStatus(t, args...)
			if err == nil && strings.Contains(out, broken) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("status %v: %v, and no line names %s:\n%s", args, err, broken, out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	missing := filepath.Join(t.TempDir(), api.ControlSocketName)
	if _, err := runStatus(t, "--socket", missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("status of no agent: %v, want an error naming %s", err, missing)
	}
}

func runStatus(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := statusCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}
