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

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/fsm"
)

// A manifest added runs; edited with the same UID it is updated in place;
// removed, its pod is stopped in the runtime and forgotten.
func TestManifestLifecycle(t *testing.T) {
	t.Parallel()
	h := start(t)
	web := podSpec{name: "web", uid: uid(1), containers: []string{"server", "sidecar"}}

	h.writePod(web)
	h.waitRunning(web.uid)
	p := h.pod(web.uid)
	if p.Name != "web-"+nodeName || p.Namespace != "test" || !p.Static || p.Config != "desired" || p.Manifest != h.path(web.file()) || p.Worker != "sync" {
		t.Errorf("pod as reported: %+v", p)
	}
	running := h.runningContainers(web.uid)
	if len(running) != 2 || running["server"] == "" || running["sidecar"] == "" {
		t.Fatalf("running containers in the runtime: %v, want server and sidecar", running)
	}
	sandboxes := h.readySandboxes(web.uid)
	if len(sandboxes) != 1 {
		t.Fatalf("ready sandboxes: %d, want 1", len(sandboxes))
	}
	h.eventually("kubelet_desired_pods counts web", func() bool {
		return h.metric("kubelet_desired_pods", map[string]string{"static": "true"}) == 1
	})

	// An edit that keeps the UID is an update of the running pod. A resync
	// (SyncPodSync) fires fsm.Update too, so only an Update after the
	// manifest change was logged (the agent logs it, then calls UpdatePod,
	// under its lock) counts.
	before := len(h.rec.of(web.uid))
	h.writePod(web.with("tier", "frontend"))
	h.eventually("the engine got the update", func() bool {
		return len(h.logLines(`msg="manifest change"`, "op=Update", string(web.uid))) > 0 &&
			slices.ContainsFunc(h.rec.of(web.uid)[before:], event(fsm.Update))
	})
	if len(h.logLines(`msg="manifest change"`, "op=Update", string(web.uid))) != 1 {
		t.Errorf("want one manifest change Update logged for web")
	}
	h.waitHousekeepings(2) // a restart, if any, would show by now
	if !isRunning(h.pod(web.uid)) {
		t.Errorf("web after the update: %+v", h.pod(web.uid))
	}
	if now := h.runningContainers(web.uid); !maps.Equal(now, running) {
		t.Errorf("containers after the update: %v, want the same as before %v", now, running)
	}
	if now := h.readySandboxes(web.uid); len(now) != 1 || now[0].Id != sandboxes[0].Id {
		t.Errorf("sandboxes after the update: %v, want only %s", now, sandboxes[0].Id)
	}
	if n := restarts(h.pod(web.uid)); n != 0 {
		t.Errorf("restarts after the update: %d", n)
	}
	if h.rec.saw(web.uid, to(fsm.TerminationRequested)) {
		t.Errorf("the update terminated web:\n%s", describe(h.rec.of(web.uid)))
	}

	// Removing the manifest stops the pod; housekeeping then forgets it.
	h.remove(web.file())
	h.waitGone(web.uid)
	if !h.nothingRuns(web.uid) {
		t.Errorf("web still runs in the runtime after its manifest was removed: sandboxes %v, containers %v", h.readySandboxes(web.uid), h.runningContainers(web.uid))
	}
	if !h.rec.saw(web.uid, to(fsm.Finished)) || !h.rec.saw(web.uid, to(fsm.Absent)) {
		t.Errorf("web did not finish and get removed:\n%s", describe(h.rec.of(web.uid)))
	}
	h.eventually("kubelet_desired_pods drops to 0", func() bool {
		return h.metric("kubelet_desired_pods", map[string]string{"static": "true"}) == 0
	})
	if n := h.metric("kubelet_orphaned_runtime_pods_total", nil); n != 0 {
		t.Errorf("kubelet_orphaned_runtime_pods_total = %v: a removed manifest's pod was taken for an orphan", n)
	}
}

// A pod whose manifest was removed is reported, as an orphan, for as long
// as the engine holds it: not only once a housekeeping has seen it (here
// none runs after the first, before the manifest was written).
func TestRemovedPodReportedUntilDropped(t *testing.T) {
	t.Parallel()
	h := start(t, withConfig(func(c *agent.Config) { c.HousekeepingInterval.Duration = time.Hour }))
	web := podSpec{name: "web", uid: uid(1)}
	h.writePod(web)
	h.waitRunning(web.uid)
	h.remove(web.file())
	h.waitPods("web is reported as a finished orphan", func(pods map[types.UID]api.PodInfo) bool {
		p, ok := pods[types.UID(web.uid)]
		// No name: an orphan's comes from the runtime, which may have
		// removed its sandbox already.
		return ok && p.Config == "orphan" && p.Lifecycle == "Finished" && p.Worker == "terminated"
	})
	if !h.nothingRuns(web.uid) {
		t.Errorf("web finished but still runs in the runtime")
	}
}

// Bad manifests are each reported with their file name and skipped; the
// running pod is not disturbed, not by a copy of its manifest under a name
// that sorts first, not even by a bad edit of its own file.
func TestBadManifests(t *testing.T) {
	t.Parallel()
	h := start(t)
	good := podSpec{name: "good", uid: uid(1)}
	h.writePod(good)
	h.waitRunning(good.uid)
	before := h.runningContainers(good.uid)

	impostor := podSpec{name: "impostor", uid: good.uid} // good's UID, another name
	bad := map[string]string{
		"broken.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [broken\n",
		"noname.yaml": strings.Replace(podSpec{name: "noname", uid: uid(2)}.yaml(), "  name: noname\n", "", 1),
		// Sorts after good.yaml: the first file with a UID keeps it.
		"zz-dup.yaml": impostor.yaml(),
		// cp good.yaml a-copy.yaml: sorts first, and still the running
		// pod keeps its name and UID (first come, first served).
		"a-copy.yaml": good.yaml(),
	}
	for file, content := range bad {
		h.write(file, content)
	}
	for file := range bad {
		h.eventually(file+"'s error is logged with its file name", func() bool {
			return len(h.logLines("level=ERROR", h.path(file))) > 0
		})
	}
	if lines := h.logLines("level=ERROR", h.path("noname.yaml")); !strings.Contains(lines[0], "metadata.name: Required value") {
		t.Errorf("noname.yaml's error does not say what is wrong: %s", lines[0])
	}
	if lines := h.logLines("level=ERROR", h.path("zz-dup.yaml")); !strings.Contains(lines[0], string(good.uid)) || !strings.Contains(lines[0], h.path(good.file())) {
		t.Errorf("zz-dup.yaml's error does not name the UID and the file that has it: %s", lines[0])
	}

	if lines := h.logLines("level=ERROR", h.path("a-copy.yaml")); !strings.Contains(lines[0], h.path(good.file())) {
		t.Errorf("a-copy.yaml's error does not name the file whose pod holds the name: %s", lines[0])
	}

	h.waitHousekeepings(2) // several scans of the unchanged bad files
	for file := range bad {
		if n := len(h.logLines("level=ERROR", h.path(file))); n != 1 {
			t.Errorf("%s: %d error lines, want 1: an unchanged bad file is reported once", file, n)
		}
	}
	pods := h.agent.Pods()
	if len(pods) != 1 || pods[0].UID != types.UID(good.uid) || pods[0].Name != "good-"+nodeName || pods[0].Manifest != h.path(good.file()) {
		t.Errorf("pods: %+v, want only good from good.yaml", pods)
	}
	for _, tr := range h.rec.all() {
		if tr.Pod != types.UID(good.uid) {
			t.Errorf("a bad manifest reached the engine: %s", describe([]fsm.Transition{tr}))
		}
	}
	undisturbed := func(when string) {
		t.Helper()
		if p := h.pod(good.uid); !isRunning(p) || restarts(p) != 0 {
			t.Errorf("%s: good is %+v, want running with no restart", when, p)
		}
		if now := h.runningContainers(good.uid); !maps.Equal(now, before) {
			t.Errorf("%s: good's containers are %v, want %v", when, now, before)
		}
		if h.rec.saw(good.uid, to(fsm.TerminationRequested)) {
			t.Errorf("%s: good was terminated:\n%s", when, describe(h.rec.of(good.uid)))
		}
	}
	undisturbed("after the bad manifests")

	// A bad edit of good.yaml is reported too; the pod keeps its last
	// good version.
	h.write(good.file(), "apiVersion: v1\nkind: Pod\nmetadata: {name: good\n")
	h.eventually("good.yaml's error is logged", func() bool {
		return len(h.logLines("level=ERROR", h.path(good.file()))) > 0
	})
	h.waitHousekeepings(2)
	undisturbed("after a bad edit of good.yaml")
}

// A UID whose manifest was removed and came back after its pod was gone
// runs again, in a new sandbox.
func TestReAddAfterRemoval(t *testing.T) {
	t.Parallel()
	h := start(t)
	db := podSpec{name: "db", uid: uid(1)}
	h.writePod(db)
	h.waitRunning(db.uid)
	old := h.readySandboxes(db.uid)[0]

	h.remove(db.file())
	h.waitGone(db.uid)
	if !h.nothingRuns(db.uid) {
		t.Fatalf("db still runs after removal")
	}
	h.writePod(db)
	h.waitRunning(db.uid)
	sbs := h.readySandboxes(db.uid)
	if len(sbs) != 1 || sbs[0].CreatedAt <= old.CreatedAt {
		t.Errorf("ready sandboxes after the re-add: %v, want one newer than %s", sbs, old.Id)
	}
	if n := len(h.runningContainers(db.uid)); n != 1 {
		t.Errorf("running containers: %d, want 1", n)
	}
	if n := countTo(h.rec.of(db.uid), fsm.Running); n != 2 {
		t.Errorf("db started %d times, want 2:\n%s", n, describe(h.rec.of(db.uid)))
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
	h := start(t, withSyncBackOff(3*time.Second), withConfig(func(c *agent.Config) {
		c.HousekeepingInterval.Duration = time.Second
	}))
	db := podSpec{name: "db", uid: uid(1)}
	h.writePod(db)
	h.waitRunning(db.uid)
	old := h.readySandboxes(db.uid)[0]

	for range 2 {
		if err := h.agent.Embedded().InjectError("StopContainer", status.Error(codes.Unavailable, "runtime restarting")); err != nil {
			t.Fatal(err)
		}
	}
	h.remove(db.file())
	h.eventually("two stops of db failed", func() bool {
		n := 0
		for _, tr := range h.rec.of(db.uid) {
			if tr.Event == fsm.TerminatingFailed {
				n++
			}
		}
		return n == 2
	})
	h.writePod(db)
	h.waitRunning(db.uid)

	all := h.rec.all()
	failed := h.rec.first(db.uid, event(fsm.TerminatingFailed))
	readded := indexFrom(all, failed, db.uid, event(fsm.Create))
	finished := indexFrom(all, failed, db.uid, to(fsm.Finished))
	restarted := indexFrom(all, failed, db.uid, to(fsm.Running))
	if readded < 0 || finished < 0 || restarted < 0 || !(readded < finished && finished < restarted) {
		t.Fatalf("want the re-add while terminating, then the old incarnation finished, then the new one running; got:\n%s", describe(h.rec.of(db.uid)))
	}
	if n := h.metric("kubelet_restarted_pods_total", map[string]string{"static": "true"}); n != 1 {
		t.Errorf(`kubelet_restarted_pods_total{static="true"} = %v, want 1`, n)
	}
	sbs := h.readySandboxes(db.uid)
	if len(sbs) != 1 || sbs[0].CreatedAt <= old.CreatedAt {
		t.Errorf("ready sandboxes after the restart: %v, want one newer than %s", sbs, old.Id)
	}
}

// Containers that exit are restarted or not as the restart policy says; a
// Never pod ends Succeeded or Failed by its exit code, and stays finished.
func TestRestartPolicy(t *testing.T) {
	t.Parallel()
	h := start(t)
	always := podSpec{name: "always", uid: uid(1)}
	succeeds := podSpec{name: "succeeds", uid: uid(2), restartPolicy: "Never"}
	fails := podSpec{name: "fails", uid: uid(3), restartPolicy: "Never"}
	for _, p := range []podSpec{always, succeeds, fails} {
		h.writePod(p)
	}
	h.waitRunning(always.uid, succeeds.uid, fails.uid)
	first := h.runningContainers(always.uid)["app"]
	for _, e := range []struct {
		uid  string
		code int32
	}{{always.uid, 1}, {succeeds.uid, 0}, {fails.uid, 3}} {
		if err := h.agent.Embedded().ExitContainer(h.runningContainers(e.uid)["app"], e.code); err != nil {
			t.Fatal(err)
		}
	}

	h.waitPods("always restarted once", func(pods map[types.UID]api.PodInfo) bool {
		p := pods[types.UID(always.uid)]
		return isRunning(p) && restarts(p) == 1
	})
	if now := h.runningContainers(always.uid)["app"]; now == "" || now == first {
		t.Errorf("always's running container: %q, want a new one (was %s)", now, first)
	}
	h.waitPods("succeeds finished Succeeded, fails finished Failed", func(pods map[types.UID]api.PodInfo) bool {
		return finishedWith(pods[types.UID(succeeds.uid)], v1.PodSucceeded, 0) && finishedWith(pods[types.UID(fails.uid)], v1.PodFailed, 3)
	})
	for _, uid := range []string{succeeds.uid, fails.uid} {
		if !h.nothingRuns(uid) {
			t.Errorf("pod %s finished but its sandbox or container still runs", uid)
		}
	}
	// A finished UID does not run again while its manifest is there.
	h.waitHousekeepings(2)
	for _, uid := range []string{succeeds.uid, fails.uid} {
		if p := h.pod(uid); p.Lifecycle != "Finished" || countTo(h.rec.of(uid), fsm.Running) != 1 {
			t.Errorf("pod %s after more housekeeping: %+v\n%s", uid, p, describe(h.rec.of(uid)))
		}
	}
	if h.rec.saw(always.uid, to(fsm.TerminationRequested)) {
		t.Errorf("always was terminated to restart a container:\n%s", describe(h.rec.of(always.uid)))
	}
}

// A runtime error while a pod stops is retried: the pod still ends
// stopped, finished and removed. Until then the agent reports it, as an
// orphan (its manifest is gone) that the engine is terminating.
func TestStopErrorDuringTermination(t *testing.T) {
	t.Parallel()
	h := start(t)
	web := podSpec{name: "web", uid: uid(1), containers: []string{"server", "sidecar"}}
	h.writePod(web)
	h.waitRunning(web.uid)
	// Two attempts fail (each stops both containers); housekeeping drives
	// the orphan's retries, one per interval.
	for range 4 {
		if err := h.agent.Embedded().InjectError("StopContainer", errors.New("runtime restarted")); err != nil {
			t.Fatal(err)
		}
	}
	h.remove(web.file())
	h.waitPods("web is reported as an orphan being terminated", func(pods map[types.UID]api.PodInfo) bool {
		p, ok := pods[types.UID(web.uid)]
		return ok && p.Config == "orphan" && p.Lifecycle == "Terminating" && p.Worker == "terminating"
	})
	h.waitGone(web.uid)
	if n := countEvent(h.rec.of(web.uid), fsm.TerminatingFailed); n != 2 {
		t.Errorf("%d failed stops, want 2:\n%s", n, describe(h.rec.of(web.uid)))
	}
	if !h.rec.saw(web.uid, to(fsm.Finished)) {
		t.Errorf("web did not finish:\n%s", describe(h.rec.of(web.uid)))
	}
	if !h.nothingRuns(web.uid) {
		t.Errorf("web still runs in the runtime: sandboxes %v, containers %v", h.readySandboxes(web.uid), h.runningContainers(web.uid))
	}
	if n := h.metric("kubelet_orphaned_runtime_pods_total", nil); n != 0 {
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
		if to(s)(t) {
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
