package integration_test

// The containerd tests of the node agent: the acceptance list of the
// agent's issue, each run by a real agent.Agent reading static pod
// manifests (see doc.go for how they skip and how CI runs them).
//
// Times are measured, where possible, with the runtime's own container
// timestamps (StartedAt, FinishedAt): the instant a container died, not the
// instant a poll noticed it. The instant of a kill is the test's wall
// clock just before it asked for the kill; both clocks are the host's.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/critest"
)

// TestContainerdPodRuns: a manifest's pod runs on containerd, and the
// agent and the runtime agree on it; removing the manifest stops it (its
// container exits 0 on SIGTERM) and removes it from both.
func TestContainerdPodRuns(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	uid := e.NewUID()
	a := e.StartAgent(filepath.Join(e.Dir, "manifests"), nil)
	pod := agenttest.CtrdPod{Name: "web", UID: uid, Grace: 10, Containers: []agenttest.CtrdContainer{agenttest.CtrdTrapper("main")}}
	a.WritePod(pod)

	p := a.WaitRunning(uid, 1)
	if want := "web-" + a.Node; p.Name != want || p.Namespace != agenttest.CtrdNamespace || !p.Static || p.Config != "desired" {
		t.Errorf("agent's pod = %s, want %s/%s, static, config desired", agenttest.CtrdDescribe(p), agenttest.CtrdNamespace, want)
	}
	if p.Containers[0].Name != "main" || p.Containers[0].Restarts != 0 {
		t.Errorf("agent's container = %+v, want main with no restart", p.Containers[0])
	}

	sbs := e.Sandboxes(uid)
	if len(sbs) != 1 {
		t.Fatalf("sandboxes of pod %s: %d, want 1", uid, len(sbs))
	}
	sb := sbs[0]
	sbStatus, err := e.RT.PodSandboxStatus(t.Context(), sb.Id, false)
	if err != nil {
		t.Fatalf("PodSandboxStatus: %v", err)
	}
	if got := sbStatus.GetStatus().GetState(); got != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("sandbox state = %v, want SANDBOX_READY", got)
	}
	if sb.Labels[cri.PodUIDLabel] != uid || sb.Labels[cri.PodNameLabel] != p.Name || sb.Labels[cri.PodNamespaceLabel] != agenttest.CtrdNamespace {
		t.Errorf("sandbox labels = %v, want uid %s, name %s, namespace %s", sb.Labels, uid, p.Name, agenttest.CtrdNamespace)
	}
	if md := sb.GetMetadata(); md.GetUid() != uid || md.GetName() != p.Name || md.GetNamespace() != agenttest.CtrdNamespace {
		t.Errorf("sandbox metadata = %v, want uid %s, name %s, namespace %s", md, uid, p.Name, agenttest.CtrdNamespace)
	}
	cs := e.Containers(uid)
	if len(cs) != 1 {
		t.Fatalf("containers of pod %s: %d, want 1", uid, len(cs))
	}
	cst, err := e.RT.ContainerStatus(t.Context(), cs[0].Id, false)
	if err != nil {
		t.Fatalf("ContainerStatus: %v", err)
	}
	c := cst.GetStatus()
	if c.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING || c.GetStartedAt() == 0 {
		t.Errorf("container state %v, started at %d; want CONTAINER_RUNNING, started", c.GetState(), c.GetStartedAt())
	}
	if c.Labels[cri.PodUIDLabel] != uid || c.Labels[cri.ContainerNameLabel] != "main" || cs[0].PodSandboxId != sb.Id {
		t.Errorf("container labels %v in sandbox %.12s; want uid %s, container main, in sandbox %.12s", c.Labels, cs[0].PodSandboxId, uid, sb.Id)
	}
	t.Logf("pod %s runs: sandbox %.12s, container %.12s started %v after the sandbox was created",
		p.Name, sb.Id, c.Id, time.Duration(c.GetStartedAt()-sb.CreatedAt).Round(time.Millisecond))

	w := e.Watch(uid, a.Obs.Poke(), "main")
	killAt := a.RemovePod(pod)
	main := w.Exited("main")
	t.Logf("manifest removed: main exited %d after %v", main.GetExitCode(), agenttest.CtrdSince(killAt, main.GetFinishedAt()).Round(time.Millisecond))
	if main.GetExitCode() != 0 {
		t.Errorf("main exit code = %d, want 0: it exits 0 on SIGTERM", main.GetExitCode())
	}
	a.WaitGone(uid)
	e.WaitRuntimeGone(uid)
}

// TestContainerdGracePeriods: removing the manifest kills the pod with its
// own grace period (3 s): a container that handles SIGTERM exits at once,
// one that ignores it is killed when the grace period is over; the final
// status has both exit codes (its phase stays Running, as the kubelet
// leaves a static pod's); then the pod is removed.
func TestContainerdGracePeriods(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	uid := e.NewUID()
	a := e.StartAgent(filepath.Join(e.Dir, "manifests"), nil)
	const grace = 3 * time.Second
	pod := agenttest.CtrdPod{Name: "graceful", UID: uid, Grace: int64(grace / time.Second),
		Containers: []agenttest.CtrdContainer{agenttest.CtrdTrapper("trapper"), agenttest.CtrdIgnorer("ignorer")}}
	a.WritePod(pod)
	a.WaitRunning(uid, 2)
	w := e.Watch(uid, a.Obs.Poke(), "trapper", "ignorer")
	final := a.RecordFinal(uid)

	killAt := a.RemovePod(pod)
	trapper, ignorer := w.Exited("trapper"), w.Exited("ignorer")
	trapperTook, ignorerTook := agenttest.CtrdSince(killAt, trapper.GetFinishedAt()), agenttest.CtrdSince(killAt, ignorer.GetFinishedAt())
	t.Logf("manifest removed (grace %v): trapper exited %d after %v, ignorer exited %d after %v",
		grace, trapper.GetExitCode(), trapperTook.Round(time.Millisecond), ignorer.GetExitCode(), ignorerTook.Round(time.Millisecond))
	if trapper.GetExitCode() != 0 || trapperTook >= time.Second {
		t.Errorf("trapper exited %d, %v after the kill; want 0, well under 1 s: it exits on SIGTERM", trapper.GetExitCode(), trapperTook)
	}
	// SIGKILL comes grace after StopContainer, which comes after the
	// manifest's removal was noticed (within a 100 ms file check).
	if ignorer.GetExitCode() != 137 || ignorerTook < grace || ignorerTook > grace+time.Second {
		t.Errorf("ignorer exited %d, %v after the kill; want 137 (SIGKILL) within [%v, %v]", ignorer.GetExitCode(), ignorerTook, grace, grace+time.Second)
	}

	a.WaitGone(uid)
	p := final.Get()
	if p == nil {
		t.Fatal("the agent never reported the pod with both containers terminated before forgetting it")
	}
	t.Logf("final status: %s", agenttest.CtrdDescribe(*p))
	codes := agenttest.CtrdExitCodes(*p)
	if codes["trapper"] != 0 || codes["ignorer"] != 137 || len(codes) != 2 {
		t.Errorf("final exit codes = %v, want trapper 0, ignorer 137", codes)
	}
	// As the kubelet's getPhase (kubernetes#116484), a static pod's phase
	// is never forced terminal: stopped for good, an Always pod stays
	// Running; its exit codes tell how it ended.
	if p.Phase != v1.PodRunning {
		t.Errorf("final phase = %s, want Running (a static pod with restartPolicy Always)", p.Phase)
	}
	if p.Lifecycle != "Terminated" && p.Lifecycle != "Finished" {
		t.Errorf("final lifecycle = %s, want Terminated or Finished", p.Lifecycle)
	}
	if n := len(e.RunningContainers(uid)); n != 0 {
		t.Errorf("%d container(s) of the pod still run", n)
	}
	e.WaitRuntimeGone(uid)
}

// TestContainerdShortenedGrace: a kill with a shorter grace period cuts
// short a kill in progress: the pod's own 30 s give way to 2 s.
func TestContainerdShortenedGrace(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	uid := e.NewUID()
	a := e.StartAgent(filepath.Join(e.Dir, "manifests"), nil)
	pod := agenttest.CtrdPod{Name: "slow", UID: uid, Grace: 30, Containers: []agenttest.CtrdContainer{agenttest.CtrdIgnorer("ignorer")}}
	a.WritePod(pod)
	a.WaitRunning(uid, 1)
	w := e.Watch(uid, a.Obs.Poke(), "ignorer")

	// The first kill: the pod's own grace period (KillPod keeps the pod
	// known while its manifest is there; a removed manifest would make the
	// agent forget it, and a second KillPod fail).
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	firstAt := time.Now()
	first := make(chan error, 1)
	go func() { first <- a.KillPod(ctx, types.UID(uid), nil) }()
	a.WaitPod(uid, "the first kill is in progress", func(p api.PodInfo) bool { return p.Lifecycle == "Terminating" })
	time.Sleep(time.Second)
	if st, _ := w.Get("ignorer"); st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("ignorer is %v 1 s into a 30 s grace period, want running", st.GetState())
	}

	short := int64(2)
	secondAt := time.Now()
	if err := a.KillPod(ctx, types.UID(uid), &short); err != nil {
		t.Fatalf("KillPod(grace 2): %v", err)
	}
	returned := time.Since(secondAt)
	ignorer := w.Exited("ignorer")
	took := agenttest.CtrdSince(secondAt, ignorer.GetFinishedAt())
	t.Logf("kill with grace 30, then %v later with grace %d: ignorer exited %d %v after the second kill (%v after the first); KillPod returned after %v",
		secondAt.Sub(firstAt).Round(time.Millisecond), short, ignorer.GetExitCode(), took.Round(time.Millisecond),
		agenttest.CtrdSince(firstAt, ignorer.GetFinishedAt()).Round(time.Millisecond), returned.Round(time.Millisecond))
	if ignorer.GetExitCode() != 137 || took < 2*time.Second || took > 3*time.Second {
		t.Errorf("ignorer exited %d, %v after the kill with grace 2; want 137 within [2s, 3s]", ignorer.GetExitCode(), took)
	}
	select {
	case err := <-first:
		if err != nil {
			t.Errorf("KillPod(pod's own grace 30) = %v, want nil once the pod stopped", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("KillPod(pod's own grace 30) still waits 5 s after the pod stopped")
	}
	p := a.WaitPod(uid, "the pod finished and stays finished while its manifest is there", func(p api.PodInfo) bool {
		return p.Lifecycle == "Finished" && agenttest.CtrdTerminated(p)
	})
	if codes := agenttest.CtrdExitCodes(p); codes["ignorer"] != 137 {
		t.Errorf("final exit codes = %v, want ignorer 137", codes)
	}
}

// TestContainerdRuntimeRestart: containerd restarts while a pod's
// containers are being stopped; the StopContainer in flight fails, the
// engine retries the terminating sync after its back-off, and the pod ends
// stopped and removed all the same.
func TestContainerdRuntimeRestart(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	sock := strings.TrimPrefix(e.Endpoint, "unix://")
	dir := filepath.Dir(sock)
	if _, err := os.Stat(filepath.Join(dir, "podlife-containerd.env")); err != nil {
		t.Skipf("restarts containerd, which needs one started by tools/containerd-up.sh; %s is not: %v", e.Endpoint, err)
	}
	script, err := filepath.Abs("../../tools/containerd-restart.sh")
	if err != nil {
		t.Fatal(err)
	}
	uid := e.NewUID()
	a := e.StartAgent(filepath.Join(e.Dir, "manifests"), nil)
	const grace = 5 * time.Second
	pod := agenttest.CtrdPod{Name: "restart", UID: uid, Grace: int64(grace / time.Second), Containers: []agenttest.CtrdContainer{agenttest.CtrdIgnorer("ignorer")}}
	a.WritePod(pod)
	a.WaitRunning(uid, 1)
	w := e.Watch(uid, a.Obs.Poke(), "ignorer")

	killAt := a.RemovePod(pod)
	time.Sleep(time.Second)
	if st, _ := w.Get("ignorer"); st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("ignorer is %v 1 s into a %v grace period, want running", st.GetState(), grace)
	}
	restartAt := time.Now()
	out, err := exec.Command(script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", script, dir, err, out)
	}
	restarted := time.Now()
	t.Logf("containerd restarted in %v, %v after the manifest's removal: %s", restarted.Sub(restartAt).Round(time.Millisecond),
		restartAt.Sub(killAt).Round(time.Millisecond), strings.TrimSpace(string(out)))

	ignorer := w.Exited("ignorer")
	t.Logf("ignorer exited %d, %v after the restart (%v after the manifest's removal)", ignorer.GetExitCode(),
		agenttest.CtrdSince(restarted, ignorer.GetFinishedAt()).Round(time.Millisecond), agenttest.CtrdSince(killAt, ignorer.GetFinishedAt()).Round(time.Millisecond))
	if ignorer.GetExitCode() != 137 {
		t.Errorf("ignorer exit code = %d, want 137: SIGKILL at the end of the retried stop's grace period", ignorer.GetExitCode())
	}
	// The restart cut the first stop short (before its SIGKILL); the retry,
	// after the back-off (and the client's reconnection), gives the grace
	// period again. The retry cannot start before containerd went down, but
	// it may start before the restart script has seen the new containerd
	// answer, so the lower bound counts from the restart's start: the first
	// stop's own SIGKILL would have come grace-1s after it.
	if took := agenttest.CtrdSince(restartAt, ignorer.GetFinishedAt()); took < grace {
		t.Errorf("ignorer died %v after containerd's restart began, want at least %v: a retried stop with the pod's whole grace period", took, grace)
	}
	if took := agenttest.CtrdSince(restarted, ignorer.GetFinishedAt()); took > grace+10*time.Second {
		t.Errorf("ignorer died %v after containerd was back, want within %v: the retry after the back-off", took, grace+10*time.Second)
	}
	a.WaitGone(uid)
	if n := len(e.RunningContainers(uid)); n != 0 {
		t.Errorf("%d container(s) of the pod still run", n)
	}
	e.WaitRuntimeGone(uid)

	// In the logs: the stop, its failure, and the retry's stop.
	lines := a.Logs.Lines(uid)
	failedAt := slices.IndexFunc(lines, func(l string) bool {
		return strings.Contains(l, "sync failed; will retry") && strings.Contains(l, "SyncTerminatingPod")
	})
	if failedAt < 0 {
		t.Errorf("the agent's logs show no failed SyncTerminatingPod for pod %s", uid)
	} else {
		t.Logf("failed sync: %s", lines[failedAt])
		retryAt := slices.IndexFunc(lines[failedAt+1:], func(l string) bool { return strings.Contains(l, "Stopping container ignorer") })
		if retryAt < 0 {
			t.Errorf("the agent's logs show no stop of container ignorer after the failed sync")
		} else {
			t.Logf("retry: %s", lines[failedAt+1+retryAt])
		}
	}
	events := a.Obs.Events(uid)
	retried := false
	for i, ev := range events {
		if ev == fsm.TerminatingFailed {
			for _, later := range events[i+1:] {
				retried = retried || later == fsm.TerminatingDone
			}
			break
		}
	}
	if !retried {
		t.Errorf("engine events of pod %s = %v, want TerminatingFailed, then (the retry) TerminatingDone", uid, events)
	}
}

// TestContainerdOrphanOfKilledAgent: an agent stopped as by SIGINT leaves
// its pods running; with the pod's manifest gone, the next agent's first
// housekeeping finds the pod in the runtime, unknown, and kills it within
// the grace period its containers recorded (3 s: the ignorer gets SIGKILL
// then).
func TestContainerdOrphanOfKilledAgent(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	uid := e.NewUID()
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, nil)
	pod := agenttest.CtrdPod{Name: "left", UID: uid, Grace: 3, Containers: []agenttest.CtrdContainer{agenttest.CtrdTrapper("trapper"), agenttest.CtrdIgnorer("ignorer")}}
	a.WritePod(pod)
	a.WaitRunning(uid, 2)

	if err := a.Stop(); err != nil {
		t.Fatalf("agent A: Run = %v, want nil after its context ended", err)
	}
	time.Sleep(500 * time.Millisecond)
	running := e.RunningContainers(uid)
	if len(running) != 2 {
		t.Fatalf("after agent A stopped, running containers of the pod = %v, want trapper and ignorer: pods outlive the agent", running)
	}
	for _, sb := range e.Sandboxes(uid) {
		if sb.State != runtimeapi.PodSandboxState_SANDBOX_READY {
			t.Errorf("after agent A stopped, sandbox %.12s is %v, want ready", sb.Id, sb.State)
		}
	}
	a.RemovePod(pod)

	b := e.StartAgent(manifests, nil)
	w := e.Watch(uid, b.Obs.Poke(), "trapper", "ignorer")
	startedAt := time.Now()
	b.WaitGone(uid) // it was only ever a runtime-only pod to B
	trapper, ignorer := w.ExitedOrGone("trapper"), w.ExitedOrGone("ignorer")
	for name, st := range map[string]*runtimeapi.ContainerStatus{"trapper": trapper, "ignorer": ignorer} {
		if st == nil {
			t.Logf("orphan's %s: removed before its exit was read", name)
			continue
		}
		t.Logf("orphan's %s: exited %d, %v after agent B started", name, st.GetExitCode(), agenttest.CtrdSince(startedAt, st.GetFinishedAt()).Round(time.Millisecond))
	}
	if trapper != nil && trapper.GetExitCode() != 0 {
		t.Errorf("orphan's trapper exit code = %d, want 0 (SIGTERM)", trapper.GetExitCode())
	}
	agenttest.CtrdEventually(t, "the orphan's sandbox is not ready (or removed)", func() (bool, string) {
		var states []string
		for _, sb := range e.Sandboxes(uid) {
			if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
				return false, "sandbox " + sb.Id[:12] + " ready"
			}
			states = append(states, sb.State.String())
		}
		return true, strings.Join(states, ",")
	})
	if n := len(e.RunningContainers(uid)); n != 0 {
		t.Errorf("%d container(s) of the orphan still run", n)
	}
	if got := b.Counter("kubelet_orphaned_runtime_pods_total"); got != 1 {
		t.Errorf("agent B's kubelet_orphaned_runtime_pods_total = %g, want 1", got)
	}
	if kills := b.Logs.Lines("killing a runtime pod nobody knows", uid); len(kills) != 1 {
		t.Errorf("agent B logged %d orphan kills of pod %s, want 1: %q", len(kills), uid, kills)
	}
	e.WaitRuntimeGone(uid)
}

// TestContainerdNodeShutdown: a graceful node shutdown stops the pods
// band by band: the priority-0 pod first, within its band's 3 s, then the
// critical one; each pod's grace period is the shorter of its band's
// period and its own (30 s).
func TestContainerdNodeShutdown(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	lowUID, criticalUID := e.NewUID(), e.NewUID()
	a := e.StartAgent(filepath.Join(e.Dir, "manifests"), func(c *config.Config) {
		c.ShutdownGracePeriod.Duration = 6 * time.Second
		c.ShutdownGracePeriodCriticalPods.Duration = 3 * time.Second
	})
	const band = 3 * time.Second
	low := agenttest.CtrdPod{Name: "low", UID: lowUID, Grace: 30, Containers: []agenttest.CtrdContainer{agenttest.CtrdIgnorer("ignorer")}}
	critical := agenttest.CtrdPod{Name: "critical", UID: criticalUID, Grace: 30, Priority: 2000000000, Containers: []agenttest.CtrdContainer{agenttest.CtrdIgnorer("ignorer")}}
	a.WritePod(low)
	a.WritePod(critical)
	a.WaitRunning(lowUID, 1)
	a.WaitRunning(criticalUID, 1)
	lowWatch := e.Watch(lowUID, a.Obs.Poke(), "ignorer")
	criticalWatch := e.Watch(criticalUID, a.Obs.Poke(), "ignorer")

	start := time.Now()
	a.RequestShutdown()
	if err := a.Wait(); err != nil {
		t.Fatalf("Run after RequestShutdown = %v, want nil", err)
	}
	ran := time.Since(start)
	// Run returned: the shutdown is complete, so nothing of the pods may run.
	for name, uid := range map[string]string{"low": lowUID, "critical": criticalUID} {
		if running := e.RunningContainers(uid); len(running) != 0 {
			t.Errorf("pod %s: containers %v still run after Run returned from the node shutdown (%v)", name, running, ran.Round(time.Millisecond))
		}
	}
	lowC, lowOK := lowWatch.ExitedWithin("ignorer", 2*time.Second)
	criticalC, criticalOK := criticalWatch.ExitedWithin("ignorer", 2*time.Second)
	if !lowOK || !criticalOK {
		t.Fatalf("after the node shutdown, low's container exited: %v, critical's: %v; want both (Run returned after %v)", lowOK, criticalOK, ran.Round(time.Millisecond))
	}
	lowTook, criticalTook := agenttest.CtrdSince(start, lowC.GetFinishedAt()), agenttest.CtrdSince(start, criticalC.GetFinishedAt())
	t.Logf("node shutdown (bands of %v each): low killed (%d) after %v, critical (%d) after %v (%v after low); Run returned after %v",
		band, lowC.GetExitCode(), lowTook.Round(time.Millisecond), criticalC.GetExitCode(), criticalTook.Round(time.Millisecond),
		time.Duration(criticalC.GetFinishedAt()-lowC.GetFinishedAt()).Round(time.Millisecond), ran.Round(time.Millisecond))
	if lowC.GetExitCode() != 137 || lowTook < band || lowTook > band+1500*time.Millisecond {
		t.Errorf("low's container exited %d, %v after the shutdown began; want 137 within [%v, %v]: grace min(band %v, own 30s)",
			lowC.GetExitCode(), lowTook, band, band+1500*time.Millisecond, band)
	}
	// The critical band starts when low's band is over: its period elapsed
	// (low ignores SIGTERM, so its kill does not return sooner). Its pod's
	// grace is min(band 3 s, own 30 s) from then.
	if criticalC.GetExitCode() != 137 || criticalC.GetFinishedAt() <= lowC.GetFinishedAt() {
		t.Errorf("critical's container exited %d at +%v, low's at +%v; want 137, after low's", criticalC.GetExitCode(), criticalTook, lowTook)
	}
	if criticalTook < 2*band || criticalTook > 2*band+1500*time.Millisecond {
		t.Errorf("critical's container died %v after the shutdown began, want within [%v, %v]: low's band, then its own grace", criticalTook, 2*band, 2*band+1500*time.Millisecond)
	}
	for _, uid := range []string{lowUID, criticalUID} {
		p, ok := a.Pod(uid)
		if !ok {
			t.Errorf("after the shutdown the agent does not know pod %s", uid)
			continue
		}
		t.Logf("final status: %s", agenttest.CtrdDescribe(p))
		if p.Phase != v1.PodFailed || p.Reason != "Terminated" || !agenttest.CtrdTerminated(p) || agenttest.CtrdExitCodes(p)["ignorer"] != 137 {
			t.Errorf("pod %s after the shutdown: %s; want phase Failed, reason Terminated, ignorer terminated 137", p.Name, agenttest.CtrdDescribe(p))
		}
	}
	for _, uid := range []string{lowUID, criticalUID} {
		if n := len(e.RunningContainers(uid)); n != 0 {
			t.Errorf("%d container(s) of pod %s still run after the shutdown", n, uid)
		}
	}
}

// TestContainerdCompletedPodStaysCompleted: a restartPolicy Never pod whose
// container exits 3 ends Failed; an agent restarted on the same node finds
// it Failed with exit code 3 and creates nothing; once its manifest is
// removed, its containers, its sandbox and its log directory are removed.
func TestContainerdCompletedPodStaysCompleted(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	uid := e.NewUID()
	manifests := filepath.Join(e.Dir, "manifests")
	first := e.StartAgent(manifests, nil)
	sameNode := func(c *config.Config) {
		c.NodeName = first.Node
		c.RootDir = filepath.Join(e.Dir, "root-"+first.Node)
	}
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: done, namespace: %s, uid: %s}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 5
  containers:
  - {name: main, image: %s, imagePullPolicy: Never, command: [sh, -c, "exit 3"]}
`, agenttest.CtrdNamespace, uid, critest.BusyboxImage)
	if err := os.WriteFile(filepath.Join(manifests, "done.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	failedWith3 := func(p api.PodInfo) bool {
		return p.Lifecycle == "Finished" && p.Phase == v1.PodFailed && agenttest.CtrdTerminated(p) && agenttest.CtrdExitCodes(p)["main"] == 3
	}
	first.WaitPod(uid, "done finished Failed with exit code 3", failedWith3)
	before := agenttest.ContainerIDs(e.Containers(uid))
	logDir := filepath.Join(e.Dir, "root-"+first.Node, "pods", agenttest.CtrdNamespace+"_done-"+first.Node+"_"+uid)
	if len(before) != 1 || len(e.Sandboxes(uid)) != 1 {
		t.Fatalf("the finished pod's containers %v, sandboxes %d; want its one container in its sandbox, kept", before, len(e.Sandboxes(uid)))
	}
	if _, err := os.Stat(logDir); err != nil {
		t.Fatalf("the pod's log directory: %v", err)
	}
	if err := first.Stop(); err != nil {
		t.Fatalf("first agent: %v", err)
	}

	next := e.StartAgent(manifests, sameNode)
	next.WaitPod(uid, "done still Failed with exit code 3 after the restart", failedWith3)
	// Finished means the engine ran the pod's last sync: nothing more starts.
	if now := agenttest.ContainerIDs(e.Containers(uid)); !slices.Equal(now, before) || len(e.RunningContainers(uid)) > 0 {
		t.Errorf("containers after the restart: %v (running %v), want only %v, exited", now, e.RunningContainers(uid), before)
	}
	for _, sb := range e.Sandboxes(uid) {
		if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			t.Errorf("sandbox %.12s is ready after the restart", sb.Id)
		}
	}

	if err := os.Remove(filepath.Join(manifests, "done.yaml")); err != nil {
		t.Fatal(err)
	}
	next.WaitGone(uid)
	e.WaitRuntimeGone(uid)
	agenttest.CtrdEventually(t, "the pod's log directory is removed", func() (bool, string) {
		_, err := os.Stat(logDir)
		return os.IsNotExist(err), fmt.Sprint(err)
	})
}

// TestContainerdReadmeExample: the manifest the README's containerd
// commands copy runs as written, and a pull that cannot succeed (the same
// image pulled Always) is reported once per back-off in one short line.
func TestContainerdReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const copyCmd = "mkdir -p manifests && cp examples/busybox.yaml manifests/"
	if !strings.Contains(string(readme), copyCmd) {
		t.Fatalf("README.md no longer says %q: keep this test on the manifest it copies", copyCmd)
	}
	example, err := os.ReadFile("../../examples/busybox.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, nil)
	if err := os.WriteFile(filepath.Join(manifests, "busybox.yaml"), example, 0o644); err != nil {
		t.Fatal(err)
	}
	var uid string
	agenttest.CtrdEventually(t, "the example's pod is known", func() (bool, string) {
		for _, p := range a.Pods() {
			if p.Name == "hello-"+a.Node {
				uid = string(p.UID)
				return true, ""
			}
		}
		return false, fmt.Sprint(len(a.Pods()), " pods")
	})
	e.RemoveAtEnd(uid)
	a.WaitRunning(uid, 1)

	// The same pod pulling its image: the pull fails, once per back-off.
	pulled := strings.Replace(string(example), "imagePullPolicy: IfNotPresent", "imagePullPolicy: Always", 1)
	pulled = strings.Replace(pulled, "name: hello\n  namespace", "name: pulled\n  namespace", 1)
	if err := os.WriteFile(filepath.Join(manifests, "pulled.yaml"), []byte(pulled), 0o644); err != nil {
		t.Fatal(err)
	}
	var pulledUID string
	agenttest.CtrdEventually(t, "the pulled pod waits for its image", func() (bool, string) {
		for _, p := range a.Pods() {
			if p.Name == "pulled-"+a.Node && len(p.Containers) == 1 && p.Containers[0].Reason == "ImagePullBackOff" {
				pulledUID = string(p.UID)
				return true, ""
			}
		}
		return false, a.Logs.Tail(3)
	})
	e.RemoveAtEnd(pulledUID)
	var failed []string
	for line := range strings.Lines(a.Logs.String()) {
		if strings.Contains(line, "Failed to pull image") || strings.Contains(line, "PullImage from image service failed") {
			failed = append(failed, line)
		}
	}
	if len(failed) != 1 || len(failed[0]) > 500 || strings.Contains(failed[0], "rpc error") {
		t.Errorf("log lines of the failed pull: %q; want one short line before the back-off ends", failed)
	}
	t.Logf("the failed pull, as logged: %s", strings.TrimSpace(failed[0]))

	for _, f := range []string{"busybox.yaml", "pulled.yaml"} {
		if err := os.Remove(filepath.Join(manifests, f)); err != nil {
			t.Fatal(err)
		}
	}
	a.WaitGone(uid)
	e.WaitRuntimeGone(uid)
}
