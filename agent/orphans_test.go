package agent_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/fsm"
)

// plant runs a sandbox and a started container of pod uid in the runtime,
// labelled as the agent labels its own, as a previous run would leave them.
func plant(h *agenttest.Harness, uid, name, namespace string) (sandboxID, containerID string) {
	h.T.Helper()
	ctx := context.Background()
	labels := map[string]string{cri.PodUIDLabel: uid, cri.PodNameLabel: name, cri.PodNamespaceLabel: namespace}
	sb := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: namespace, Uid: uid},
		Labels:   labels,
	}
	sandboxID, err := h.RT.RunPodSandbox(ctx, sb, "")
	if err != nil {
		h.T.Fatal(err)
	}
	cLabels := map[string]string{cri.ContainerNameLabel: "app"}
	for k, v := range labels {
		cLabels[k] = v
	}
	containerID, err = h.RT.CreateContainer(ctx, sandboxID, &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: "app"},
		Image:       &runtimeapi.ImageSpec{Image: agenttest.Image},
		Labels:      cLabels,
		Annotations: map[string]string{cri.RestartCountAnnotation: "0", cri.GracePeriodAnnotation: "5"},
	}, sb)
	if err != nil {
		h.T.Fatal(err)
	}
	if err := h.RT.StartContainer(ctx, containerID); err != nil {
		h.T.Fatal(err)
	}
	return sandboxID, containerID
}

// A pod found in the runtime that no manifest has is stopped by the first
// housekeeping, counted once, and forgotten; the manifests' pods run on.
func TestOrphanStoppedByFirstHousekeeping(t *testing.T) {
	t.Parallel()
	orphan := agenttest.UID(99)
	good := agenttest.PodSpec{Name: "good", UID: agenttest.UID(1)}
	h := agenttest.Start(t, agenttest.BeforeRun(func(h *agenttest.Harness) {
		plant(h, orphan, "leftover", "old")
		h.WritePod(good)
	}))
	h.WaitRunning(good.UID)
	h.WaitGone(orphan)
	if !h.NothingRuns(orphan) {
		t.Errorf("the orphan still runs: sandboxes %v, containers %v", h.ReadySandboxes(orphan), h.RunningContainers(orphan))
	}
	if n := h.Metric("kubelet_orphaned_runtime_pods_total", nil); n != 1 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v, want 1", n)
	}
	// The first housekeeping runs before Run logs "agent running".
	kill := firstLine(h.Logs.String(), "killing a runtime pod nobody knows", orphan)
	running := firstLine(h.Logs.String(), `msg="agent running"`)
	if kill < 0 || running < 0 || kill > running {
		t.Errorf("the orphan was not killed by the first housekeeping (kill at line %d, agent running at line %d)", kill, running)
	}
	if !h.Rec.Saw(orphan, agenttest.Event(fsm.RuntimeKill)) || !h.Rec.Saw(orphan, agenttest.To(fsm.Absent)) {
		t.Errorf("orphan's transitions:\n%s", agenttest.Describe(h.Rec.Of(orphan)))
	}

	// Later housekeepings find its stopped sandbox and leave it alone.
	h.WaitHousekeepings(3)
	if n := h.Metric("kubelet_orphaned_runtime_pods_total", nil); n != 1 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v after more housekeeping, want 1", n)
	}
	if n := countEvent(h.Rec.Of(orphan), fsm.RuntimeKill); n != 1 {
		t.Errorf("the orphan was killed %d times:\n%s", n, agenttest.Describe(h.Rec.Of(orphan)))
	}
	if p := h.Pod(good.UID); !agenttest.IsRunning(p) || h.Rec.Saw(good.UID, agenttest.To(fsm.TerminationRequested)) {
		t.Errorf("good: %+v\n%s", p, agenttest.Describe(h.Rec.Of(good.UID)))
	}
}

// A manifest's pod found running at startup (an agent restarted on a
// runtime that outlived it) is adopted, not killed as an orphan: the
// manifests are read before the first housekeeping.
func TestRunningPodOfManifestAdoptedAtStartup(t *testing.T) {
	t.Parallel()
	rt := agenttest.OutlivingRuntime(t)
	kept := agenttest.PodSpec{Name: "kept", UID: agenttest.UID(1)}
	var sandboxID, containerID string
	h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) { c.RuntimeEndpoint = rt.Endpoint() }), agenttest.BeforeRun(func(h *agenttest.Harness) {
		sandboxID, containerID = plant(h, kept.UID, "kept-"+agenttest.NodeName, "test")
		h.WritePod(kept)
	}))
	if h.Agent.Embedded() != nil {
		t.Fatal("the agent started its own runtime")
	}
	h.WaitRunning(kept.UID)
	h.WaitHousekeepings(2)
	if got := h.RunningContainers(kept.UID); len(got) != 1 || got["app"] != containerID {
		t.Errorf("running containers: %v, want the planted %s only", got, containerID)
	}
	if sbs := h.ReadySandboxes(kept.UID); len(sbs) != 1 || sbs[0].Id != sandboxID {
		t.Errorf("ready sandboxes: %v, want the planted %s only", sbs, sandboxID)
	}
	if n := h.Metric("kubelet_orphaned_runtime_pods_total", nil); n != 0 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v, want 0", n)
	}
	if p := h.Pod(kept.UID); restarts(p) != 0 || h.Rec.Saw(kept.UID, agenttest.To(fsm.TerminationRequested)) {
		t.Errorf("kept was restarted or stopped: %+v\n%s", p, agenttest.Describe(h.Rec.Of(kept.UID)))
	}
}

// firstLine is the index of the first line of text that contains every
// one of parts, or -1.
func firstLine(text string, parts ...string) int {
	i := 0
	for line := range strings.Lines(text) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			return i
		}
		i++
	}
	return -1
}

// countEvent counts the transitions fired by ev.
func countEvent(ts []fsm.Transition, ev fsm.Event) int {
	n := 0
	for _, t := range ts {
		if t.Event == ev {
			n++
		}
	}
	return n
}

// A pod that finished since housekeeping last read the runtime is not
// taken for an orphan: not when a failed read leaves housekeeping with
// nothing newer than a snapshot that still shows it running.
func TestFinishedPodNotTakenForOrphan(t *testing.T) {
	t.Parallel()
	// Only housekeeping reads the runtime's full lists (the poller reads
	// them once, at start), so it is the one to meet the injected error.
	h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) {
		c.HousekeepingInterval.Duration = 500 * time.Millisecond
		c.RuntimePollInterval.Duration = time.Hour
	}))
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1)}
	h.WritePod(web)
	h.WaitRunning(web.UID)
	h.WaitHousekeepings(2) // the last read shows web running
	h.Remove(web.File())
	h.Eventually("web finished", func() bool { return h.Rec.Saw(web.UID, agenttest.To(fsm.Finished)) })
	if err := h.Agent.Embedded().InjectError("ListPodSandbox", status.Error(codes.Unavailable, "runtime restarting")); err != nil {
		t.Fatal(err)
	}
	h.Eventually("housekeeping met the read error", func() bool {
		return len(h.LogLines("housekeeping: runtime cache refresh failed")) > 0
	})
	h.WaitGone(web.UID) // dropped by that housekeeping or a later one
	if n := h.Metric("kubelet_orphaned_runtime_pods_total", nil); n != 0 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v, want 0\n%s", n, agenttest.Describe(h.Rec.Of(web.UID)))
	}
	if h.Rec.Saw(web.UID, agenttest.Event(fsm.RuntimeKill)) {
		t.Errorf("web was killed as an orphan:\n%s", agenttest.Describe(h.Rec.Of(web.UID)))
	}
}

// What a previous run left stopped in the runtime, of a pod nobody knows,
// is removed by housekeeping, as the kubelet's garbage collector removes
// the sandboxes of deleted pods.
func TestDeadPodOfNobodyRemoved(t *testing.T) {
	t.Parallel()
	dead := agenttest.UID(98)
	h := agenttest.Start(t, agenttest.BeforeRun(func(h *agenttest.Harness) {
		sandboxID, _ := plant(h, dead, "gone", "old")
		if err := h.RT.StopPodSandbox(context.Background(), sandboxID); err != nil {
			t.Fatal(err)
		}
	}))
	h.Eventually("the dead pod's sandbox and container are removed", func() bool {
		return len(h.Sandboxes(dead)) == 0 && len(h.Containers(dead)) == 0
	})
	if n := h.Metric("kubelet_orphaned_runtime_pods_total", nil); n != 0 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v: a dead pod is not an orphan to kill", n)
	}
	if h.Rec.Saw(dead, agenttest.Event(fsm.RuntimeKill)) {
		t.Errorf("the engine was asked to kill a dead pod:\n%s", agenttest.Describe(h.Rec.Of(dead)))
	}
}
