package agent_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/fsm"
)

// A manifest added runs; edited with the same UID it is updated in place;
// removed, its pod is stopped in the runtime and forgotten.
func TestManifestLifecycle(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1), Containers: []string{"server", "sidecar"}}

	h.WritePod(web)
	h.WaitRunning(web.UID)
	p := h.Pod(web.UID)
	if p.Name != "web-"+agenttest.NodeName || p.Namespace != "test" || !p.Static || p.Config != "desired" || p.Manifest != h.Path(web.File()) || p.Worker != "sync" {
		t.Errorf("pod as reported: %+v", p)
	}
	running := h.RunningContainers(web.UID)
	if len(running) != 2 || running["server"] == "" || running["sidecar"] == "" {
		t.Fatalf("running containers in the runtime: %v, want server and sidecar", running)
	}
	sandboxes := h.ReadySandboxes(web.UID)
	if len(sandboxes) != 1 {
		t.Fatalf("ready sandboxes: %d, want 1", len(sandboxes))
	}
	h.Eventually("kubelet_desired_pods counts web", func() bool {
		return h.Metric("kubelet_desired_pods", map[string]string{"static": "true"}) == 1
	})

	// An edit that keeps the UID is an update of the running pod. A resync
	// (SyncPodSync) fires fsm.Update too, so only an Update after the
	// manifest change was logged (the agent logs it, then calls UpdatePod,
	// under its lock) counts.
	before := len(h.Rec.Of(web.UID))
	h.WritePod(web.With("tier", "frontend"))
	h.Eventually("the engine got the update", func() bool {
		return len(h.LogLines(`msg="manifest change"`, "op=Update", string(web.UID))) > 0 &&
			slices.ContainsFunc(h.Rec.Of(web.UID)[before:], agenttest.Event(fsm.Update))
	})
	if len(h.LogLines(`msg="manifest change"`, "op=Update", string(web.UID))) != 1 {
		t.Errorf("want one manifest change Update logged for web")
	}
	h.WaitHousekeepings(2) // a restart, if any, would show by now
	if !agenttest.IsRunning(h.Pod(web.UID)) {
		t.Errorf("web after the update: %+v", h.Pod(web.UID))
	}
	if now := h.RunningContainers(web.UID); !maps.Equal(now, running) {
		t.Errorf("containers after the update: %v, want the same as before %v", now, running)
	}
	if now := h.ReadySandboxes(web.UID); len(now) != 1 || now[0].Id != sandboxes[0].Id {
		t.Errorf("sandboxes after the update: %v, want only %s", now, sandboxes[0].Id)
	}
	if n := restarts(h.Pod(web.UID)); n != 0 {
		t.Errorf("restarts after the update: %d", n)
	}
	if h.Rec.Saw(web.UID, agenttest.To(fsm.TerminationRequested)) {
		t.Errorf("the update terminated web:\n%s", agenttest.Describe(h.Rec.Of(web.UID)))
	}

	// Removing the manifest stops the pod; housekeeping then forgets it.
	h.Remove(web.File())
	h.WaitGone(web.UID)
	if !h.NothingRuns(web.UID) {
		t.Errorf("web still runs in the runtime after its manifest was removed: sandboxes %v, containers %v", h.ReadySandboxes(web.UID), h.RunningContainers(web.UID))
	}
	if !h.Rec.Saw(web.UID, agenttest.To(fsm.Finished)) || !h.Rec.Saw(web.UID, agenttest.To(fsm.Absent)) {
		t.Errorf("web did not finish and get removed:\n%s", agenttest.Describe(h.Rec.Of(web.UID)))
	}
	h.Eventually("kubelet_desired_pods drops to 0", func() bool {
		return h.Metric("kubelet_desired_pods", map[string]string{"static": "true"}) == 0
	})
	if n := h.Metric("kubelet_orphaned_runtime_pods_total", nil); n != 0 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v: a removed manifest's pod was taken for an orphan", n)
	}
}

// A pod whose manifest was removed is reported, as an orphan, for as long
// as the engine holds it: not only once a housekeeping has seen it (here
// none runs after the first, before the manifest was written).
func TestRemovedPodReportedUntilDropped(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) { c.HousekeepingInterval.Duration = time.Hour }))
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1)}
	h.WritePod(web)
	h.WaitRunning(web.UID)
	h.Remove(web.File())
	h.WaitPods("web is reported as a finished orphan", func(pods map[types.UID]api.PodInfo) bool {
		p, ok := pods[types.UID(web.UID)]
		// No name: an orphan's comes from the runtime, which may have
		// removed its sandbox already.
		return ok && p.Config == "orphan" && p.Lifecycle == "Finished" && p.Worker == "terminated"
	})
	if !h.NothingRuns(web.UID) {
		t.Errorf("web finished but still runs in the runtime")
	}
}

// Bad manifests are each reported with their file name and skipped; the
// running pod is not disturbed, not by a copy of its manifest under a name
// that sorts first, not even by a bad edit of its own file.
func TestBadManifests(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	good := agenttest.PodSpec{Name: "good", UID: agenttest.UID(1)}
	h.WritePod(good)
	h.WaitRunning(good.UID)
	before := h.RunningContainers(good.UID)

	impostor := agenttest.PodSpec{Name: "impostor", UID: good.UID} // good's UID, another name
	bad := map[string]string{
		"broken.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [broken\n",
		"noname.yaml": strings.Replace(agenttest.PodSpec{Name: "noname", UID: agenttest.UID(2)}.YAML(), "  name: noname\n", "", 1),
		// Sorts after good.yaml: the first file with a UID keeps it.
		"zz-dup.yaml": impostor.YAML(),
		// cp good.yaml a-copy.yaml: sorts first, and still the running
		// pod keeps its name and UID (first come, first served).
		"a-copy.yaml": good.YAML(),
	}
	for file, content := range bad {
		h.Write(file, content)
	}
	for file := range bad {
		h.Eventually(file+"'s error is logged with its file name", func() bool {
			return len(h.LogLines("level=ERROR", h.Path(file))) > 0
		})
	}
	if lines := h.LogLines("level=ERROR", h.Path("noname.yaml")); !strings.Contains(lines[0], "metadata.name: Required value") {
		t.Errorf("noname.yaml's error does not say what is wrong: %s", lines[0])
	}
	if lines := h.LogLines("level=ERROR", h.Path("zz-dup.yaml")); !strings.Contains(lines[0], string(good.UID)) || !strings.Contains(lines[0], h.Path(good.File())) {
		t.Errorf("zz-dup.yaml's error does not name the UID and the file that has it: %s", lines[0])
	}

	if lines := h.LogLines("level=ERROR", h.Path("a-copy.yaml")); !strings.Contains(lines[0], h.Path(good.File())) {
		t.Errorf("a-copy.yaml's error does not name the file whose pod holds the name: %s", lines[0])
	}

	h.WaitHousekeepings(2) // several scans of the unchanged bad files
	for file := range bad {
		if n := len(h.LogLines("level=ERROR", h.Path(file))); n != 1 {
			t.Errorf("%s: %d error lines, want 1: an unchanged bad file is reported once", file, n)
		}
	}
	pods := h.Agent.Pods()
	if len(pods) != 1 || pods[0].UID != types.UID(good.UID) || pods[0].Name != "good-"+agenttest.NodeName || pods[0].Manifest != h.Path(good.File()) {
		t.Errorf("pods: %+v, want only good from good.yaml", pods)
	}
	for _, tr := range h.Rec.All() {
		if tr.Pod != types.UID(good.UID) {
			t.Errorf("a bad manifest reached the engine: %s", agenttest.Describe([]fsm.Transition{tr}))
		}
	}
	undisturbed := func(when string) {
		t.Helper()
		if p := h.Pod(good.UID); !agenttest.IsRunning(p) || restarts(p) != 0 {
			t.Errorf("%s: good is %+v, want running with no restart", when, p)
		}
		if now := h.RunningContainers(good.UID); !maps.Equal(now, before) {
			t.Errorf("%s: good's containers are %v, want %v", when, now, before)
		}
		if h.Rec.Saw(good.UID, agenttest.To(fsm.TerminationRequested)) {
			t.Errorf("%s: good was terminated:\n%s", when, agenttest.Describe(h.Rec.Of(good.UID)))
		}
	}
	undisturbed("after the bad manifests")

	// A bad edit of good.yaml is reported too; the pod keeps its last
	// good version.
	h.Write(good.File(), "apiVersion: v1\nkind: Pod\nmetadata: {name: good\n")
	h.Eventually("good.yaml's error is logged", func() bool {
		return len(h.LogLines("level=ERROR", h.Path(good.File()))) > 0
	})
	h.WaitHousekeepings(2)
	undisturbed("after a bad edit of good.yaml")
}

// A UID whose manifest was removed and came back after its pod was gone
// runs again, in a new sandbox.
func TestReAddAfterRemoval(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	db := agenttest.PodSpec{Name: "db", UID: agenttest.UID(1)}
	h.WritePod(db)
	h.WaitRunning(db.UID)
	old := h.ReadySandboxes(db.UID)[0]

	h.Remove(db.File())
	h.WaitGone(db.UID)
	if !h.NothingRuns(db.UID) {
		t.Fatalf("db still runs after removal")
	}
	h.WritePod(db)
	h.WaitRunning(db.UID)
	sbs := h.ReadySandboxes(db.UID)
	if len(sbs) != 1 || sbs[0].CreatedAt <= old.CreatedAt {
		t.Errorf("ready sandboxes after the re-add: %v, want one newer than %s", sbs, old.Id)
	}
	if n := len(h.RunningContainers(db.UID)); n != 1 {
		t.Errorf("running containers: %d, want 1", n)
	}
	if n := countTo(h.Rec.Of(db.UID), fsm.Running); n != 2 {
		t.Errorf("db started %d times, want 2:\n%s", n, agenttest.Describe(h.Rec.Of(db.UID)))
	}
}

// A UID whose manifest comes back while its previous incarnation is still
// terminating restarts once that incarnation finished, and counts as a
// restarted pod.
func TestReAddWhileTerminating(t *testing.T) {
	t.Parallel()
	// Two stops fail. Without its manifest the pod is an orphan, whose
	// termination each housekeeping drives at once (T24), back-off or not:
	// the second failure comes from a housekeeping, and the next attempt
	// waits for the next one, a second later (the back-off is longer).
	// The manifest is back within a scan (50 ms) of the second failure.
	h := agenttest.Start(t, agenttest.WithSyncBackOff(3*time.Second), agenttest.WithConfig(func(c *config.Config) {
		c.HousekeepingInterval.Duration = time.Second
	}))
	db := agenttest.PodSpec{Name: "db", UID: agenttest.UID(1)}
	h.WritePod(db)
	h.WaitRunning(db.UID)
	old := h.ReadySandboxes(db.UID)[0]

	for range 2 {
		if err := h.Agent.Embedded().InjectError("StopContainer", status.Error(codes.Unavailable, "runtime restarting")); err != nil {
			t.Fatal(err)
		}
	}
	h.Remove(db.File())
	h.Eventually("two stops of db failed", func() bool {
		n := 0
		for _, tr := range h.Rec.Of(db.UID) {
			if tr.Event == fsm.TerminatingFailed {
				n++
			}
		}
		return n == 2
	})
	h.WritePod(db)
	h.WaitRunning(db.UID)

	all := h.Rec.All()
	failed := h.Rec.First(db.UID, agenttest.Event(fsm.TerminatingFailed))
	readded := indexFrom(all, failed, db.UID, agenttest.Event(fsm.Create))
	finished := indexFrom(all, failed, db.UID, agenttest.To(fsm.Finished))
	restarted := indexFrom(all, failed, db.UID, agenttest.To(fsm.Running))
	if readded < 0 || finished < 0 || restarted < 0 || !(readded < finished && finished < restarted) {
		t.Fatalf("want the re-add while terminating, then the old incarnation finished, then the new one running; got:\n%s", agenttest.Describe(h.Rec.Of(db.UID)))
	}
	if n := h.Metric("kubelet_restarted_pods_total", map[string]string{"static": "true"}); n != 1 {
		t.Errorf(`kubelet_restarted_pods_total{static="true"} = %v, want 1`, n)
	}
	sbs := h.ReadySandboxes(db.UID)
	if len(sbs) != 1 || sbs[0].CreatedAt <= old.CreatedAt {
		t.Errorf("ready sandboxes after the restart: %v, want one newer than %s", sbs, old.Id)
	}
}

// Containers that exit are restarted or not as the restart policy says; a
// Never pod ends Succeeded or Failed by its exit code, and stays finished.
func TestRestartPolicy(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	always := agenttest.PodSpec{Name: "always", UID: agenttest.UID(1)}
	succeeds := agenttest.PodSpec{Name: "succeeds", UID: agenttest.UID(2), RestartPolicy: "Never"}
	fails := agenttest.PodSpec{Name: "fails", UID: agenttest.UID(3), RestartPolicy: "Never"}
	for _, p := range []agenttest.PodSpec{always, succeeds, fails} {
		h.WritePod(p)
	}
	h.WaitRunning(always.UID, succeeds.UID, fails.UID)
	first := h.RunningContainers(always.UID)["app"]
	for _, e := range []struct {
		uid  string
		code int32
	}{{always.UID, 1}, {succeeds.UID, 0}, {fails.UID, 3}} {
		if err := h.Agent.Embedded().ExitContainer(h.RunningContainers(e.uid)["app"], e.code); err != nil {
			t.Fatal(err)
		}
	}

	h.WaitPods("always restarted once", func(pods map[types.UID]api.PodInfo) bool {
		p := pods[types.UID(always.UID)]
		return agenttest.IsRunning(p) && restarts(p) == 1
	})
	if now := h.RunningContainers(always.UID)["app"]; now == "" || now == first {
		t.Errorf("always's running container: %q, want a new one (was %s)", now, first)
	}
	h.WaitPods("succeeds finished Succeeded, fails finished Failed", func(pods map[types.UID]api.PodInfo) bool {
		return finishedWith(pods[types.UID(succeeds.UID)], v1.PodSucceeded, 0) && finishedWith(pods[types.UID(fails.UID)], v1.PodFailed, 3)
	})
	for _, uid := range []string{succeeds.UID, fails.UID} {
		if !h.NothingRuns(uid) {
			t.Errorf("pod %s finished but its sandbox or container still runs", uid)
		}
	}
	// A finished UID does not run again while its manifest is there.
	h.WaitHousekeepings(2)
	for _, uid := range []string{succeeds.UID, fails.UID} {
		if p := h.Pod(uid); p.Lifecycle != "Finished" || countTo(h.Rec.Of(uid), fsm.Running) != 1 {
			t.Errorf("pod %s after more housekeeping: %+v\n%s", uid, p, agenttest.Describe(h.Rec.Of(uid)))
		}
	}
	if h.Rec.Saw(always.UID, agenttest.To(fsm.TerminationRequested)) {
		t.Errorf("always was terminated to restart a container:\n%s", agenttest.Describe(h.Rec.Of(always.UID)))
	}
}

// A runtime error while a pod stops is retried: the pod still ends
// stopped, finished and removed. Until then the agent reports it, as an
// orphan (its manifest is gone) that the engine is terminating.
func TestStopErrorDuringTermination(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1), Containers: []string{"server", "sidecar"}}
	h.WritePod(web)
	h.WaitRunning(web.UID)
	// Two attempts fail (each stops both containers); housekeeping drives
	// the orphan's retries, one per interval.
	for range 4 {
		if err := h.Agent.Embedded().InjectError("StopContainer", errors.New("runtime restarted")); err != nil {
			t.Fatal(err)
		}
	}
	h.Remove(web.File())
	h.WaitPods("web is reported as an orphan being terminated", func(pods map[types.UID]api.PodInfo) bool {
		p, ok := pods[types.UID(web.UID)]
		return ok && p.Config == "orphan" && p.Lifecycle == "Terminating" && p.Worker == "terminating"
	})
	h.WaitGone(web.UID)
	if n := countEvent(h.Rec.Of(web.UID), fsm.TerminatingFailed); n != 2 {
		t.Errorf("%d failed stops, want 2:\n%s", n, agenttest.Describe(h.Rec.Of(web.UID)))
	}
	if !h.Rec.Saw(web.UID, agenttest.To(fsm.Finished)) {
		t.Errorf("web did not finish:\n%s", agenttest.Describe(h.Rec.Of(web.UID)))
	}
	if !h.NothingRuns(web.UID) {
		t.Errorf("web still runs in the runtime: sandboxes %v, containers %v", h.ReadySandboxes(web.UID), h.RunningContainers(web.UID))
	}
	if n := h.Metric("kubelet_orphaned_runtime_pods_total", nil); n != 0 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v, want 0", n)
	}
}

// restarts is the pod's total container restart count.
func restarts(p api.PodInfo) int32 {
	var n int32
	for _, c := range p.Containers {
		n += c.Restarts
	}
	return n
}

// finishedWith reports whether p finished in phase with its one container
// terminated with code.
func finishedWith(p api.PodInfo, phase v1.PodPhase, code int32) bool {
	return p.Lifecycle == "Finished" && p.Phase == phase && len(p.Containers) == 1 &&
		p.Containers[0].State == "terminated" && p.Containers[0].ExitCode != nil && *p.Containers[0].ExitCode == code
}

// countTo counts the transitions into s.
func countTo(ts []fsm.Transition, s fsm.State) int {
	n := 0
	for _, t := range ts {
		if agenttest.To(s)(t) {
			n++
		}
	}
	return n
}

// indexFrom is the index of the first transition of uid after index from
// that matches match, or -1.
func indexFrom(ts []fsm.Transition, from int, uid string, match func(fsm.Transition) bool) int {
	if from < 0 {
		return -1
	}
	for i := from + 1; i < len(ts); i++ {
		if ts[i].Pod == types.UID(uid) && match(ts[i]) {
			return i
		}
	}
	return -1
}
