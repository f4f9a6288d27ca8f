package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/client"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/testlog"
)

// With no shutdown grace period configured, a node shutdown says that
// graceful node shutdown is disabled and Run returns without stopping a
// pod or waiting for one.
func TestShutdownDisabledReturnsAtOnce(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1)}
	h.WritePod(web)
	h.WaitRunning(web.UID)
	answer, err := client.ShutdownNode(t.Context(), api.ControlSocket(h.Root))
	if err != nil {
		t.Fatalf("shutdown over the control socket: %v", err)
	}
	if !strings.Contains(answer, "graceful node shutdown is disabled") || !strings.Contains(answer, "stops no pod") {
		t.Errorf("the control socket answered %q, want it to say graceful node shutdown is disabled", answer)
	}
	if err := h.Wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(h.LogLines("graceful node shutdown is disabled (no shutdownGracePeriod configured)")) != 1 {
		t.Errorf("no log line says graceful node shutdown is disabled:\n%s", h.Logs.Tail(20))
	}
	if lines := h.LogLines("still stopping"); len(lines) != 0 {
		t.Errorf("the agent waited for pods it did not stop: %q", lines)
	}
	if h.Rec.Saw(web.UID, agenttest.To(fsm.TerminationRequested)) {
		t.Error("web was stopped")
	}
}

// Stopped by its context, the agent says what becomes of the pods: with
// the embedded runtime, they end with it.
func TestStopSaysWhatBecomesOfPods(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	h.Cancel()
	if err := h.Wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(h.LogLines("agent stopping; its pods end with it")) != 1 || len(h.LogLines("pods keep running")) != 0 {
		t.Errorf("the stop message does not say the pods end with the agent:\n%s", h.Logs.Tail(5))
	}
}

// At verbosity 1 the engine's transitions are logged at debug level, by
// name, except the rows that change nothing; at 0 none is.
func TestVerbosityLogsTransitions(t *testing.T) {
	t.Parallel()
	for _, verbosity := range []int{0, 1} {
		h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) { c.Verbosity = verbosity }))
		web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1)}
		h.WritePod(web)
		h.WaitRunning(web.UID)
		h.WaitHousekeepings(1) // its SyncKnownPods keeps web's record: a row that changes nothing
		lines := h.LogLines("level=DEBUG", `msg="engine transition"`, "uid="+web.UID, "event=Create", "from=Absent", "to=Waiting")
		if want := verbosity; len(lines) != want {
			t.Errorf("verbosity %d: %d debug lines of web's creation, want %d:\n%s", verbosity, len(lines), want, h.Logs.Tail(20))
		}
		if lines := h.LogLines(`msg="engine transition"`, "event=SyncKnownPods"); len(lines) != 0 {
			t.Errorf("verbosity %d: rows that change nothing are logged: %q", verbosity, lines)
		}
	}
}

// JSON logs name a manifest change's op as text logs do.
func TestJSONLogsNameManifestOps(t *testing.T) {
	t.Parallel()
	root, err := os.MkdirTemp("", "pl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	cfg := config.Default()
	cfg.NodeName, cfg.RootDir, cfg.Address, cfg.StaticPodPath = agenttest.NodeName, root, "127.0.0.1:0", root
	// Tests in parallel never bind the kubelet's healthz port 10248.
	cfg.HealthzPort = 0
	cfg.FileCheckFrequency.Duration = 50 * time.Millisecond
	cfg.Allocatable = agenttest.Resources("cpu=8,memory=16Gi")
	if err := os.WriteFile(filepath.Join(root, "web.yaml"), []byte(agenttest.PodSpec{Name: "web", UID: agenttest.UID(1)}.YAML()), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	a, err := agent.New(context.Background(), cfg, agent.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	deadline := time.Now().Add(agenttest.WaitTimeout)
	for len(logs.Lines(`"msg":"manifest change"`)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	lines := logs.Lines(`"msg":"manifest change"`)
	if len(lines) != 1 {
		t.Fatalf("%d manifest change lines, want 1:\n%s", len(lines), logs)
	}
	var line struct{ Op any }
	if err := json.NewDecoder(bytes.NewReader([]byte(lines[0]))).Decode(&line); err != nil || line.Op != "Add" {
		t.Errorf("manifest change logged op %#v (%v), want \"Add\": %s", line.Op, err, lines[0])
	}
}
