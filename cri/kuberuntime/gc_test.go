package kuberuntime

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri/containergc"
	"github.com/podlife/podlife/internal/crifake"
)

// A crash-looping container keeps, after each collection, its newest
// instance and the one before it: the others go with their logs (rotated
// files too) and termination message files, while the restart count and
// the last termination state stay right.
func TestGarbageCollectCrashLoop(t *testing.T) {
	root := t.TempDir()
	h := newHarness(t, Options{PodsRoot: root, LogRoot: root}, "img")
	pod := crifake.MakePod("crash", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	pod.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
	logOf := func(attempt int) string {
		return filepath.Join(root, "ns_crash_uid-crash", "a", strconv.Itoa(attempt)+".log")
	}
	msgOf := func(attempt int) string {
		return filepath.Join(root, "uid-crash", "containers", "a", strconv.Itoa(attempt))
	}
	const restarts = 8
	for attempt := 0; attempt <= restarts; attempt++ {
		h.clock.Step(time.Minute) // past any back-off (40 s), within its quiet period
		h.mustSync(pod)
		id := crifake.ContainerID(pod, 0, "a", uint32(attempt))
		h.setLogPath(id, logOf(attempt))
		crifake.WriteFile(t, logOf(attempt), "2030-01-02T03:04:05Z stdout F attempt "+strconv.Itoa(attempt)+"\n")
		crifake.WriteFile(t, logOf(attempt)+".20300102-030405", "rotated\n")
		h.s.GarbageCollect(containergc.DefaultPolicy())
		h.s.Close()

		_, cs := h.podObjects(pod.UID)
		if want := min(attempt+1, 2); len(cs) != want {
			t.Fatalf("attempt %d: %d instances %v, want %d", attempt, len(cs), cs, want)
		}
		st := h.statuses.last(t, pod.UID).ContainerStatuses[0]
		if st.RestartCount != int32(attempt) || st.State.Running == nil || (attempt > 0 && st.LastTerminationState.Terminated == nil) {
			t.Fatalf("attempt %d: status %+v", attempt, st)
		}
		for old := range attempt - 1 {
			for _, f := range []string{logOf(old), logOf(old) + ".20300102-030405", msgOf(old)} {
				if _, err := os.Lstat(f); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("attempt %d: %s of a removed instance is still there (%v)", attempt, f, err)
				}
			}
		}
		for kept := max(attempt-1, 0); kept <= attempt; kept++ {
			for _, f := range []string{logOf(kept), msgOf(kept)} {
				if _, err := os.Lstat(f); err != nil {
					t.Errorf("attempt %d: %s of a kept instance: %v", attempt, f, err)
				}
			}
		}
		h.exit(id, 1)
	}
	// In back-off, the exited instance is the newest: the state shows it as
	// the last termination; the collection keeps it alone.
	h.syncPod(pod) //nolint:errcheck // ErrCrashLoopBackOff
	h.s.GarbageCollect(containergc.DefaultPolicy())
	h.s.Close()
	if _, cs := h.podObjects(pod.UID); len(cs) != 1 || cs[0] != crifake.ContainerID(pod, 0, "a", restarts) {
		t.Fatalf("in back-off: instances %v, want the newest alone", cs)
	}
	h.syncPod(pod) //nolint:errcheck // ErrCrashLoopBackOff
	st := h.statuses.last(t, pod.UID).ContainerStatuses[0]
	if st.RestartCount != restarts || st.State.Waiting == nil || st.LastTerminationState.Terminated == nil || st.LastTerminationState.Terminated.ExitCode != 1 {
		t.Fatalf("in back-off: status %+v", st)
	}
	// The next instance is numbered after the newest.
	h.clock.Step(time.Minute)
	h.mustSync(pod)
	if st := h.statuses.last(t, pod.UID).ContainerStatuses[0]; st.RestartCount != restarts+1 || st.State.Running == nil {
		t.Fatalf("after the back-off: status %+v", st)
	}
}

// A sandbox that died goes once no container of it is held, the pod's
// newest sandbox stays; a running container and a pod being removed are
// never touched.
func TestGarbageCollectSandboxes(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	h.mustSync(pod)
	h.exit(crifake.ContainerID(pod, 0, "a", 0), 1)
	h.killSandbox(crifake.SandboxID(pod, 0))
	h.clock.Step(time.Minute)
	h.mustSync(pod) // a new sandbox, a1 in it

	h.s.GarbageCollect(containergc.DefaultPolicy())
	h.s.Close()
	// a0 is the newest dead instance: it and its sandbox stay.
	if sbs, cs := h.podObjects(pod.UID); len(sbs) != 2 || len(cs) != 2 {
		t.Fatalf("after the first collection: %v %v", sbs, cs)
	}
	h.exit(crifake.ContainerID(pod, 1, "a", 1), 1)
	h.clock.Step(time.Minute)
	h.mustSync(pod) // a2
	h.s.GarbageCollect(containergc.DefaultPolicy())
	h.s.Close()
	sbs, cs := h.podObjects(pod.UID)
	if len(sbs) != 1 || sbs[0] != crifake.SandboxID(pod, 1) || len(cs) != 2 {
		t.Fatalf("after the second collection: %v %v; want the new sandbox with a1 and a2", sbs, cs)
	}
	if st := h.containerState(crifake.ContainerID(pod, 1, "a", 2)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("the running instance is %s", st)
	}
}

// setLogPath gives container id the log path a real runtime reports.
func (h *harness) setLogPath(id, path string) {
	h.t.Helper()
	h.fake.Lock()
	defer h.fake.Unlock()
	c, ok := h.fake.Containers[id]
	if !ok {
		h.t.Fatalf("container %s does not exist", id)
	}
	c.LogPath = path
}

// Under the strictest policy (no dead instance kept, per container or on
// the node) a pod's newest instances stay: the completed init container's,
// which tells that the pod is initialized, and the crash-looping app's,
// which carries its restart count; a Never pod's completed container is
// not run again.
func TestGarbageCollectKeepsNewest(t *testing.T) {
	strictest := containergc.Policy{MaxPerPodContainer: 0, MaxContainers: 0}
	h := newHarness(t, Options{}, "img")
	pod := crifake.WithInits(crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}), crifake.Init{Name: "init"})
	h.mustSync(pod)
	h.exit(crifake.ContainerID(pod, 0, "init", 0), 0)
	for attempt := range 4 {
		h.clock.Step(time.Minute)
		h.mustSync(pod)
		h.exit(crifake.ContainerID(pod, 0, "app", uint32(attempt)), 1)
		h.s.GarbageCollect(strictest)
		h.s.Close()
	}
	if _, cs := h.podObjects(pod.UID); len(cs) != 2 {
		t.Fatalf("instances %v; want init's and app's newest", cs)
	}
	h.clock.Step(time.Minute)
	h.mustSync(pod)
	st := h.statuses.last(t, pod.UID)
	if ic := st.InitContainerStatuses[0]; ic.State.Terminated == nil || ic.State.Terminated.ExitCode != 0 {
		t.Errorf("init: %+v; want terminated 0", ic.State)
	}
	if app := st.ContainerStatuses[0]; app.RestartCount != 4 || app.State.Running == nil {
		t.Errorf("app: restart count %d, state %+v; want 4, running", app.RestartCount, app.State)
	}
	if n := h.calls("CreateContainer"); n != 1+5 {
		t.Errorf("%d containers created; want init once and app 5 times", n)
	}

	never := crifake.MakePod("never", v1.RestartPolicyNever, crifake.Ctr{Name: "a"})
	h.mustSync(never)
	h.exit(crifake.ContainerID(never, 0, "a", 0), 0)
	h.s.GarbageCollect(strictest)
	h.s.Close()
	if terminal, err := h.syncPod(never); !terminal || err != nil {
		t.Fatalf("SyncPod of the completed Never pod = %v, %v; want terminal", terminal, err)
	}
	if _, cs := h.podObjects(never.UID); len(cs) != 1 {
		t.Errorf("Never pod: instances %v; want its one", cs)
	}
}
