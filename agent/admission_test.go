package agent_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/fsm"
)

// A pod that asks for more CPU or memory than the node has left is
// rejected with the kubelet's reason and never reaches the runtime; a pod
// that fits is admitted, and counts against what is left.
func TestAdmissionRejectsWhatDoesNotFit(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) { c.Allocatable = agenttest.Resources("cpu=2,memory=1Gi") }))
	big := agenttest.PodSpec{Name: "big", UID: agenttest.UID(1), CPU: "3"}
	fat := agenttest.PodSpec{Name: "fat", UID: agenttest.UID(2), Memory: "2Gi"}
	fits := agenttest.PodSpec{Name: "fits", UID: agenttest.UID(3), CPU: "1500m", Memory: "512Mi"}
	more := agenttest.PodSpec{Name: "more", UID: agenttest.UID(4), CPU: "1"} // fits the node, not what fits leaves
	rejected := []agenttest.PodSpec{big, fat, more}

	// Every poll also looks for a sandbox of a rejected pod.
	var sandboxOf []string
	lookForSandboxes := func() {
		for _, p := range rejected {
			if len(h.Sandboxes(p.UID)) > 0 || len(h.Containers(p.UID)) > 0 {
				sandboxOf = append(sandboxOf, p.Name)
			}
		}
	}
	poll := func(cond func(pods map[types.UID]api.PodInfo) bool) func(map[types.UID]api.PodInfo) bool {
		return func(pods map[types.UID]api.PodInfo) bool {
			lookForSandboxes()
			return cond(pods)
		}
	}
	h.WritePod(big)
	h.WritePod(fat)
	h.WaitPods("big and fat rejected", poll(func(pods map[types.UID]api.PodInfo) bool {
		return isRejected(pods[types.UID(big.UID)], "OutOfcpu") && isRejected(pods[types.UID(fat.UID)], "OutOfmemory")
	}))
	if msg := h.Pod(big.UID).Message; !strings.Contains(msg, "cpu, requested: 3000, used: 0, capacity: 2000") {
		t.Errorf("big's message: %q", msg)
	}
	if msg := h.Pod(fat.UID).Message; !strings.Contains(msg, "memory, requested: 2147483648, used: 0, capacity: 1073741824") {
		t.Errorf("fat's message: %q", msg)
	}

	h.WritePod(fits)
	h.WaitPods("fits runs", poll(func(pods map[types.UID]api.PodInfo) bool { return agenttest.IsRunning(pods[types.UID(fits.UID)]) }))
	h.WritePod(more)
	h.WaitPods("more rejected", poll(func(pods map[types.UID]api.PodInfo) bool {
		return isRejected(pods[types.UID(more.UID)], "OutOfcpu")
	}))
	if msg := h.Pod(more.UID).Message; !strings.Contains(msg, "used: 1500") {
		t.Errorf("more's message does not count fits: %q", msg)
	}
	h.WaitHousekeepings(2)
	lookForSandboxes()
	if len(sandboxOf) > 0 {
		t.Errorf("the runtime held sandboxes or containers of rejected pods %v", sandboxOf)
	}
	for _, p := range rejected {
		if ts := h.Rec.Of(p.UID); len(ts) > 0 {
			t.Errorf("rejected pod %s reached the engine:\n%s", p.Name, agenttest.Describe(ts))
		}
		if got := h.Pod(p.UID); got.Lifecycle != "" {
			t.Errorf("rejected pod %s has engine state %q", p.Name, got.Lifecycle)
		}
	}
	for reason, want := range map[string]float64{"OutOfcpu": 2, "OutOfmemory": 1} {
		if n := h.Metric("kubelet_admission_rejections_total", map[string]string{"reason": reason}); n != want {
			t.Errorf("kubelet_admission_rejections_total{reason=%q} = %v, want %v", reason, n, want)
		}
	}
	if n := h.Metric("kubelet_active_pods", map[string]string{"static": "true"}); n != 1 {
		t.Errorf("kubelet_active_pods = %v, want 1 (fits)", n)
	}
}

// A pod that reached a terminal phase keeps its resources while the engine
// is still stopping it, and gives them back once the engine says it
// terminated (admission.ActivePods as the agent wires it).
//
// No terminal pod with running containers can be made through the agent:
// the embedded runtime's containers only exit or are stopped. The nearest
// is a Never pod that completed (phase Succeeded) whose termination is
// held up by a runtime error: its sandbox still stands, the engine has not
// said it terminated, and it still counts.
func TestAdmissionCountsTerminalPodUntilTerminated(t *testing.T) {
	t.Parallel()
	// The sandbox stop fails once; the retry waits for a back-off of 2 s,
	// in which a manifest is scanned (50 ms) and admitted. Nothing retries
	// it sooner: the pod is desired (housekeeping drives only orphans) and
	// its runtime state does not change meanwhile (no poll resyncs it).
	h := agenttest.Start(t, agenttest.WithSyncBackOff(2*time.Second), agenttest.WithConfig(func(c *config.Config) { c.Allocatable = agenttest.Resources("cpu=1,memory=1Gi") }))
	job := agenttest.PodSpec{Name: "job", UID: agenttest.UID(1), RestartPolicy: "Never", CPU: "600m"}
	next := agenttest.PodSpec{Name: "next", UID: agenttest.UID(2), CPU: "600m"}
	h.WritePod(job)
	h.WaitRunning(job.UID)
	settle(h, job.UID) // only the poll that sees the exit resyncs job

	if err := h.Agent.Embedded().InjectError("StopPodSandbox", errors.New("sandbox busy")); err != nil {
		t.Fatal(err)
	}
	if err := h.Agent.Embedded().ExitContainer(h.RunningContainers(job.UID)["app"], 0); err != nil {
		t.Fatal(err)
	}
	h.Eventually("job completed and its termination failed once", func() bool {
		return h.Rec.Saw(job.UID, agenttest.Event(fsm.TerminatingFailed))
	})
	if p := h.Pod(job.UID); p.Phase != v1.PodSucceeded || p.Lifecycle != "Terminating" {
		t.Fatalf("job: %+v, want phase Succeeded while the engine is terminating it", p)
	}
	h.WritePod(next)
	h.WaitPods("next rejected while job still holds its CPU", func(pods map[types.UID]api.PodInfo) bool {
		return isRejected(pods[types.UID(next.UID)], "OutOfcpu")
	})
	if msg := h.Pod(next.UID).Message; !strings.Contains(msg, "used: 600") {
		t.Errorf("next's message does not count job: %q", msg)
	}
	h.WaitPods("job finished", func(pods map[types.UID]api.PodInfo) bool {
		return pods[types.UID(job.UID)].Lifecycle == "Finished"
	})
	if !h.NothingRuns(job.UID) {
		t.Errorf("job finished but its sandbox still stands")
	}
	// The edited manifest is admitted again: job no longer counts.
	h.WritePod(next.With("attempt", "2"))
	h.WaitRunning(next.UID)
	if p := h.Pod(next.UID); p.Config != "desired" {
		t.Errorf("next: %+v", p)
	}
}

// isRejected reports whether p was refused by admission for reason.
func isRejected(p api.PodInfo, reason string) bool {
	return p.Config == "rejected" && p.Phase == v1.PodFailed && p.Reason == reason
}

// A pod for another OS, or setting a field podlife refuses, is rejected
// with the kubelet's reason (podlife's own for fields) and a message
// naming the field, and never reaches the engine; a pod of this node's OS
// runs.
func TestAdmissionRejectsOtherOSAndRefusedFields(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	withSpec := func(p agenttest.PodSpec, lines string) string {
		return strings.Replace(p.YAML(), "spec:\n", "spec:\n"+lines, 1)
	}
	windows := agenttest.PodSpec{Name: "windows", UID: agenttest.UID(1)}
	labelled := agenttest.PodSpec{Name: "labelled", UID: agenttest.UID(2)}.With(v1.LabelOSStable, "windows")
	hostPort := agenttest.PodSpec{Name: "hostport", UID: agenttest.UID(3)}
	linux := agenttest.PodSpec{Name: "linux", UID: agenttest.UID(4)}
	h.Write(windows.File(), withSpec(windows, "  os:\n    name: windows\n"))
	h.WritePod(labelled)
	h.Write(hostPort.File(), strings.Replace(hostPort.YAML(), "    image:", "    ports:\n    - containerPort: 80\n      hostPort: 8080\n    image:", 1))
	h.Write(linux.File(), withSpec(linux, "  os:\n    name: linux\n"))
	h.WaitRunning(linux.UID)
	h.WaitPods("the others rejected", func(pods map[types.UID]api.PodInfo) bool {
		return isRejected(pods[types.UID(windows.UID)], "PodOSNotSupported") &&
			isRejected(pods[types.UID(labelled.UID)], "PodOSSelectorNodeLabelDoesNotMatch") &&
			isRejected(pods[types.UID(hostPort.UID)], "UnsupportedPodField")
	})
	for uid, want := range map[string]string{
		windows.UID:  "Failed to admit pod as the OS field doesn't match node OS",
		labelled.UID: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
		hostPort.UID: "spec.containers[0].ports[0].hostPort: podlife maps no host ports",
	} {
		if msg := h.Pod(uid).Message; !strings.Contains(msg, want) {
			t.Errorf("pod %s: message %q, want %q", uid, msg, want)
		}
		if ts := h.Rec.Of(uid); len(ts) > 0 {
			t.Errorf("rejected pod %s reached the engine:\n%s", uid, agenttest.Describe(ts))
		}
	}
}

// A static pod whose nodeSelector names another node is rejected with the
// kubelet's NodeAffinity; one selecting this node's default labels runs.
func TestAdmissionChecksNodeAffinity(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	withSpec := func(p agenttest.PodSpec, lines string) string {
		return strings.Replace(p.YAML(), "spec:\n", "spec:\n"+lines, 1)
	}
	elsewhere := agenttest.PodSpec{Name: "elsewhere", UID: agenttest.UID(1)}
	here := agenttest.PodSpec{Name: "here", UID: agenttest.UID(2)}
	h.Write(elsewhere.File(), withSpec(elsewhere, "  nodeSelector:\n    kubernetes.io/hostname: another-node\n"))
	h.Write(here.File(), withSpec(here, "  nodeSelector:\n    kubernetes.io/os: linux\n"))
	h.WaitRunning(here.UID)
	h.WaitPods("elsewhere rejected", func(pods map[types.UID]api.PodInfo) bool {
		return isRejected(pods[types.UID(elsewhere.UID)], "NodeAffinity")
	})
	if msg := h.Pod(elsewhere.UID).Message; msg != "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" {
		t.Errorf("message %q", msg)
	}
}
