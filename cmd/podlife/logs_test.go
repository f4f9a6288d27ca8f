package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/config"
)

// twoContainers is a static pod of two containers.
const twoContainers = `apiVersion: v1
kind: Pod
metadata: {name: two, namespace: test}
spec:
  containers:
  - {name: a, image: registry.k8s.io/pause:3.10}
  - {name: b, image: registry.k8s.io/pause:3.10}
`

// podlife logs, on an agent with the embedded runtime: every error names
// what is missing or which choices there are, and the TCP endpoint
// refuses /containerLogs, pointing at the control socket.
func TestLogsCommandErrors(t *testing.T) {
	root, err := os.MkdirTemp("", "pl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	manifests := filepath.Join(root, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(manifests, "two.yaml"), []byte(twoContainers), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.NodeName = "node1"
	cfg.RootDir = root
	cfg.StaticPodPath = manifests
	// Tests in parallel never bind the kubelet's healthz port 10248.
	cfg.HealthzPort = 0
	a, err := agent.New(t.Context(), cfg, agent.Options{ReadOnlyAnyPort: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		<-ran
	})
	deadline := time.Now().Add(20 * time.Second)
	for len(a.Pods()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the agent did not take the manifest's pod")
		}
		time.Sleep(20 * time.Millisecond)
	}

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"an unknown pod", []string{"-n", "test", "nope"}, []string{"404", "pod test/nope is not one of this agent's pods"}},
		{"the default namespace", []string{"two-node1", "a"}, []string{"404", "pod default/two-node1"}},
		{"an unknown container", []string{"-n", "test", "two-node1", "c"}, []string{"404", `container "c" is not valid for pod test/two-node1, choose one of: [a b]`}},
		{"no container of two", []string{"-n", "test", "two-node1"}, []string{"400", "a container name must be specified for pod test/two-node1, choose one of: [a b]"}},
		{"the embedded runtime", []string{"-n", "test", "two-node1", "a"}, []string{"404", "the embedded runtime writes no container logs"}},
		{"a negative since", []string{"-n", "test", "--since", "-1s", "two-node1", "a"}, []string{"--since -1s"}},
		{"a tail below -1", []string{"-n", "test", "--tail", "-2", "two-node1", "a"}, []string{"--tail -2: must be -1 (all) or a number of lines from 0"}},
		{"a negative limit", []string{"-n", "test", "--limit-bytes", "-1", "two-node1", "a"}, []string{"--limit-bytes -1: must be 0 (no limit)"}},
		{"no agent", []string{"--socket", filepath.Join(root, "none.sock"), "two-node1"}, []string{"none.sock", "no such file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runLogs(t, append([]string{"--root-dir", root}, tc.args...)...)
			if tc.args[0] == "--socket" {
				_, err = runLogs(t, tc.args...)
			}
			for _, want := range tc.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("podlife logs %v: %v, want an error mentioning %q", tc.args, err, want)
				}
			}
		})
	}

	resp, err := http.Get("http://" + a.Addr() + "/containerLogs/test/two-node1/a")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), a.ControlSocket()) || !strings.Contains(string(body), "podlife logs") {
		t.Errorf("GET /containerLogs on the TCP endpoint: %s %q, want 403 pointing at the control socket", resp.Status, body)
	}
}

// runLogs runs podlife logs with args and returns its output.
func runLogs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := logsCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SilenceUsage = true
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}
