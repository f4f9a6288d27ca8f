package agent_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/fsm"
)

// A pod that asks for more CPU or memory than the node has left is
// rejected with the kubelet's reason and never reaches the runtime; a pod
// that fits is admitted, and counts against what is left.
func TestAdmissionRejectsWhatDoesNotFit(t *testing.T) {
	t.Parallel()
	h := start(t, withConfig(func(c *agent.Config) { c.Allocatable = resources("cpu=2,memory=1Gi") }))
	big := podSpec{name: "big", uid: uid(1), cpu: "3"}
	fat := podSpec{name: "fat", uid: uid(2), memory: "2Gi"}
	fits := podSpec{name: "fits", uid: uid(3), cpu: "1500m", memory: "512Mi"}
	more := podSpec{name: "more", uid: uid(4), cpu: "1"} // fits the node, not what fits leaves
	rejected := []podSpec{big, fat, more}

	// Every poll also looks for a sandbox of a rejected pod.
	var sandboxOf []string
	lookForSandboxes := func() {
		for _, p := range rejected {
			if len(h.sandboxes(p.uid)) > 0 || len(h.containers(p.uid)) > 0 {
				sandboxOf = append(sandboxOf, p.name)
			}
		}
	}
	poll := func(cond func(pods map[types.UID]api.PodInfo) bool) func(map[types.UID]api.PodInfo) bool {
		return func(pods map[types.UID]api.PodInfo) bool {
			lookForSandboxes()
			return cond(pods)
		}
	}
	h.writePod(big)
	h.writePod(fat)
	h.waitPods("big and fat rejected", poll(func(pods map[types.UID]api.PodInfo) bool {
		return isRejected(pods[types.UID(big.uid)], "OutOfcpu") && isRejected(pods[types.UID(fat.uid)], "OutOfmemory")
	}))
	if msg := h.pod(big.uid).Message; !strings.Contains(msg, "cpu, requested: 3000, used: 0, capacity: 2000") {
		t.Errorf("big's message: %q", msg)
	}
	if msg := h.pod(fat.uid).Message; !strings.Contains(msg, "memory, requested: 2147483648, used: 0, capacity: 1073741824") {
		t.Errorf("fat's message: %q", msg)
	}

	h.writePod(fits)
	h.waitPods("fits runs", poll(func(pods map[types.UID]api.PodInfo) bool { return isRunning(pods[types.UID(fits.uid)]) }))
	h.writePod(more)
	h.waitPods("more rejected", poll(func(pods map[types.UID]api.PodInfo) bool {
		return isRejected(pods[types.UID(more.uid)], "OutOfcpu")
	}))
	if msg := h.pod(more.uid).Message; !strings.Contains(msg, "used: 1500") {
		t.Errorf("more's message does not count fits: %q", msg)
	}
	h.waitHousekeepings(2)
	lookForSandboxes()
	if len(sandboxOf) > 0 {
		t.Errorf("the runtime held sandboxes or containers of rejected pods %v", sandboxOf)
	}
	for _, p := range rejected {
		if ts := h.rec.of(p.uid); len(ts) > 0 {
			t.Errorf("rejected pod %s reached the engine:\n%s", p.name, describe(ts))
		}
		if got := h.pod(p.uid); got.Lifecycle != "" {
			t.Errorf("rejected pod %s has engine state %q", p.name, got.Lifecycle)
		}
	}
	for reason, want := range map[string]float64{"OutOfcpu": 2, "OutOfmemory": 1} {
		if n := h.metric("kubelet_admission_rejections_total", map[string]string{"reason": reason}); n != want {
			t.Errorf("kubelet_admission_rejections_total{reason=%q} = %v, want %v", reason, n, want)
		}
	}
	if n := h.metric("kubelet_active_pods", map[string]string{"static": "true"}); n != 1 {
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
	h := start(t, withSyncBackOff(2*time.Second), withConfig(func(c *agent.Config) { c.Allocatable = resources("cpu=1,memory=1Gi") }))
	job := podSpec{name: "job", uid: uid(1), restartPolicy: "Never", cpu: "600m"}
	next := podSpec{name: "next", uid: uid(2), cpu: "600m"}
	h.writePod(job)
	h.waitRunning(job.uid)
	h.settle(job.uid) // only the poll that sees the exit resyncs job

	if err := h.agent.Embedded().InjectError("StopPodSandbox", errors.New("sandbox busy")); err != nil {
		t.Fatal(err)
	}
	if err := h.agent.Embedded().ExitContainer(h.runningContainers(job.uid)["app"], 0); err != nil {
		t.Fatal(err)
	}
	h.eventually("job completed and its termination failed once", func() bool {
		return h.rec.saw(job.uid, event(fsm.TerminatingFailed))
	})
	if p := h.pod(job.uid); p.Phase != v1.PodSucceeded || p.Lifecycle != "Terminating" {
		t.Fatalf("job: %+v, want phase Succeeded while the engine is terminating it", p)
	}
	h.writePod(next)
	h.waitPods("next rejected while job still holds its CPU", func(pods map[types.UID]api.PodInfo) bool {
		return isRejected(pods[types.UID(next.uid)], "OutOfcpu")
	})
	if msg := h.pod(next.uid).Message; !strings.Contains(msg, "used: 600") {
		t.Errorf("next's message does not count job: %q", msg)
	}
	h.waitPods("job finished", func(pods map[types.UID]api.PodInfo) bool {
		return pods[types.UID(job.uid)].Lifecycle == "Finished"
	})
	if !h.nothingRuns(job.uid) {
		t.Errorf("job finished but its sandbox still stands")
	}
	// The edited manifest is admitted again: job no longer counts.
	h.writePod(next.with("attempt", "2"))
	h.waitRunning(next.uid)
	if p := h.pod(next.uid); p.Config != "desired" {
		t.Errorf("next: %+v", p)
	}
}

// isRejected reports whether p was refused by admission for reason.
func isRejected(p api.PodInfo, reason string) bool {
	return p.Config == "rejected" && p.Phase == v1.PodFailed && p.Reason == reason
}
