package kuberuntime

// The plan's decisions on a real containerd, recorded as a container trace
// (trace/container) and replayed through the table: in Go always, and by
// TLC against tla/TraceContainerLifecycle.tla when $TLA2TOOLS_JAR is set.
// It skips unless $PODLIFE_CRI_ENDPOINT names a runtime (internal/critest).

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri/podplan"
	ctrace "github.com/podlife/podlife/trace/container"
)

func TestContainerdDecisionsReplayThroughTheTable(t *testing.T) {
	var (
		mu    sync.Mutex
		trace bytes.Buffer
		rec   = ctrace.NewRecorder(&trace)
	)
	e, statuses := newCtrdSyncerWith(t, Options{Decided: func(pod *v1.Pod, steps []podplan.Step) {
		mu.Lock()
		defer mu.Unlock()
		sync := rec.Begin(pod.UID)
		for _, s := range steps {
			sync.Record(s.Container, s.Event, s.Params, s.Transition)
		}
	}})
	always := v1.ContainerRestartPolicyAlways
	sidecar := busybox("sidecar", []string{"sleep", "3600"})
	sidecar.RestartPolicy = &always
	pod := e.pod("decisions", 0, busybox("main", []string{"sh", "-c", "sleep 1; exit 1"}))
	pod.Spec.InitContainers = []v1.Container{busybox("init", []string{"true"}), sidecar}

	// Sync until the main container crashed and was restarted once: init
	// ran, the sidecar started, main started, exited, waited in back-off
	// and started again.
	deadline := time.Now().Add(ctrdTimeout)
	for {
		if _, err := e.s.SyncPod(t.Context(), 0, pod, nil, nil); err != nil && !errors.Is(err, ErrCrashLoopBackOff) {
			t.Fatalf("SyncPod: %v", err)
		}
		st := statuses.last(t, pod.UID)
		if len(st.ContainerStatuses) == 1 && st.ContainerStatuses[0].RestartCount > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %+v", ctrdTimeout, st.ContainerStatuses)
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.terminate(pod, new(int64(0)))

	mu.Lock()
	data := bytes.Clone(trace.Bytes())
	mu.Unlock()
	lines, err := ctrace.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrace.Check(lines); err != nil {
		t.Fatalf("the plan's decisions do not replay through the table: %v\n%s", err, data)
	}
	rows := map[string]bool{}
	for _, l := range lines {
		rows[l.Row] = true
	}
	for _, want := range []string{"NotCreatedStart", "CreatedBegin", "ExitedFailureRestart", "BackOffBackoffDone"} {
		if !rows[want] {
			t.Errorf("the trace fires no %s row:\n%s", want, data)
		}
	}
	t.Logf("%d decisions recorded", len(lines))

	jar := os.Getenv("TLA2TOOLS_JAR")
	if jar == "" {
		t.Log("TLA2TOOLS_JAR is not set: the trace is not given to TLC (SKIPPED that part)")
		return
	}
	file := filepath.Join(t.TempDir(), "decisions.ndjson")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// A bound for a stuck JVM, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	cmd := exec.CommandContext(ctx, filepath.Join(root, "tools", "tlc.sh"), "--trace-config", "TraceContainerLifecycle", "--trace", file)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "decisions.ndjson]: accepted") {
		t.Fatalf("TLC on the decisions' trace: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "accepted") {
			t.Logf("TLC: %s", strings.TrimSpace(line))
		}
	}
}
