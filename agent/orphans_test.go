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

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/fsm"
)

// plant runs a sandbox and a started container of pod uid in the runtime,
// labelled as the agent labels its own, as a previous run would leave them.
func (h *harness) plant(uid, name, namespace string) (sandboxID, containerID string) {
	h.t.Helper()
	ctx := context.Background()
	labels := map[string]string{cri.PodUIDLabel: uid, cri.PodNameLabel: name, cri.PodNamespaceLabel: namespace}
	sb := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: namespace, Uid: uid},
		Labels:   labels,
	}
	sandboxID, err := h.rt.RunPodSandbox(ctx, sb, "")
	if err != nil {
		h.t.Fatal(err)
	}
	cLabels := map[string]string{cri.ContainerNameLabel: "app"}
	for k, v := range labels {
		cLabels[k] = v
	}
	containerID, err = h.rt.CreateContainer(ctx, sandboxID, &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: "app"},
		Image:       &runtimeapi.ImageSpec{Image: image},
		Labels:      cLabels,
		Annotations: map[string]string{cri.RestartCountAnnotation: "0", cri.GracePeriodAnnotation: "5"},
	}, sb)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.rt.StartContainer(ctx, containerID); err != nil {
		h.t.Fatal(err)
	}
	return sandboxID, containerID
}

// A pod found in the runtime that no manifest has is stopped by the first
// housekeeping, counted once, and forgotten; the manifests' pods run on.
func TestOrphanStoppedByFirstHousekeeping(t *testing.T) {
	t.Parallel()
	orphan := uid(99)
	good := podSpec{name: "good", uid: uid(1)}
	h := start(t, beforeRun(func(h *harness) {
		h.plant(orphan, "leftover", "old")
		h.writePod(good)
	}))
	h.waitRunning(good.uid)
	h.waitGone(orphan)
	if !h.nothingRuns(orphan) {
		t.Errorf("the orphan still runs: sandboxes %v, containers %v", h.readySandboxes(orphan), h.runningContainers(orphan))
	}
	if n := h.metric("kubelet_orphaned_runtime_pods_total", nil); n != 1 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v, want 1", n)
	}
	// The first housekeeping runs before Run logs "agent running".
	kill := firstLine(h.logs.String(), "killing a runtime pod nobody knows", orphan)
	running := firstLine(h.logs.String(), `msg="agent running"`)
	if kill < 0 || running < 0 || kill > running {
		t.Errorf("the orphan was not killed by the first housekeeping (kill at line %d, agent running at line %d)", kill, running)
	}
	if !h.rec.saw(orphan, event(fsm.RuntimeKill)) || !h.rec.saw(orphan, to(fsm.Absent)) {
		t.Errorf("orphan's transitions:\n%s", describe(h.rec.of(orphan)))
	}

	// Later housekeepings find its stopped sandbox and leave it alone.
	h.waitHousekeepings(3)
	if n := h.metric("kubelet_orphaned_runtime_pods_total", nil); n != 1 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v after more housekeeping, want 1", n)
	}
	if n := countEvent(h.rec.of(orphan), fsm.RuntimeKill); n != 1 {
		t.Errorf("the orphan was killed %d times:\n%s", n, describe(h.rec.of(orphan)))
	}
	if p := h.pod(good.uid); !isRunning(p) || h.rec.saw(good.uid, to(fsm.TerminationRequested)) {
		t.Errorf("good: %+v\n%s", p, describe(h.rec.of(good.uid)))
	}
}

// A manifest's pod found running at startup (an agent restarted on a
// runtime that outlived it) is adopted, not killed as an orphan: the
// manifests are read before the first housekeeping.
func TestRunningPodOfManifestAdoptedAtStartup(t *testing.T) {
	t.Parallel()
	rt := outlivingRuntime(t)
	kept := podSpec{name: "kept", uid: uid(1)}
	var sandboxID, containerID string
	h := start(t, withConfig(func(c *agent.Config) { c.RuntimeEndpoint = rt.Endpoint() }), beforeRun(func(h *harness) {
		sandboxID, containerID = h.plant(kept.uid, "kept-"+nodeName, "test")
		h.writePod(kept)
	}))
	if h.agent.Embedded() != nil {
		t.Fatal("the agent started its own runtime")
	}
	h.waitRunning(kept.uid)
	h.waitHousekeepings(2)
	if got := h.runningContainers(kept.uid); len(got) != 1 || got["app"] != containerID {
		t.Errorf("running containers: %v, want the planted %s only", got, containerID)
	}
	if sbs := h.readySandboxes(kept.uid); len(sbs) != 1 || sbs[0].Id != sandboxID {
		t.Errorf("ready sandboxes: %v, want the planted %s only", sbs, sandboxID)
	}
	if n := h.metric("kubelet_orphaned_runtime_pods_total", nil); n != 0 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v, want 0", n)
	}
	if p := h.pod(kept.uid); restarts(p) != 0 || h.rec.saw(kept.uid, to(fsm.TerminationRequested)) {
		t.Errorf("kept was restarted or stopped: %+v\n%s", p, describe(h.rec.of(kept.uid)))
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
	h := start(t, withConfig(func(c *agent.Config) {
		c.HousekeepingInterval.Duration = 500 * time.Millisecond
		c.RuntimePollInterval.Duration = time.Hour
	}))
	web := podSpec{name: "web", uid: uid(1)}
	h.writePod(web)
	h.waitRunning(web.uid)
	h.waitHousekeepings(2) // the last read shows web running
	h.remove(web.file())
	h.eventually("web finished", func() bool { return h.rec.saw(web.uid, to(fsm.Finished)) })
	if err := h.agent.Embedded().InjectError("ListPodSandbox", status.Error(codes.Unavailable, "runtime restarting")); err != nil {
		t.Fatal(err)
	}
	h.eventually("housekeeping met the read error", func() bool {
		return len(h.logLines("housekeeping: runtime cache refresh failed")) > 0
	})
	h.waitGone(web.uid) // dropped by that housekeeping or a later one
	if n := h.metric("kubelet_orphaned_runtime_pods_total", nil); n != 0 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v, want 0\n%s", n, describe(h.rec.of(web.uid)))
	}
	if h.rec.saw(web.uid, event(fsm.RuntimeKill)) {
		t.Errorf("web was killed as an orphan:\n%s", describe(h.rec.of(web.uid)))
	}
}

// What a previous run left stopped in the runtime, of a pod nobody knows,
// is removed by housekeeping, as the kubelet's garbage collector removes
// the sandboxes of deleted pods.
func TestDeadPodOfNobodyRemoved(t *testing.T) {
	t.Parallel()
	dead := uid(98)
	h := start(t, beforeRun(func(h *harness) {
		sandboxID, _ := h.plant(dead, "gone", "old")
		if err := h.rt.StopPodSandbox(context.Background(), sandboxID); err != nil {
			t.Fatal(err)
		}
	}))
	h.eventually("the dead pod's sandbox and container are removed", func() bool {
		return len(h.sandboxes(dead)) == 0 && len(h.containers(dead)) == 0
	})
	if n := h.metric("kubelet_orphaned_runtime_pods_total", nil); n != 0 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v: a dead pod is not an orphan to kill", n)
	}
	if h.rec.saw(dead, event(fsm.RuntimeKill)) {
		t.Errorf("the engine was asked to kill a dead pod:\n%s", describe(h.rec.of(dead)))
	}
}
