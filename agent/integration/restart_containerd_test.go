package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/fsm"
)

// ctrdLingerer exits 0 on SIGTERM, but only after lingering secs seconds:
// within a grace period longer than that it ends by itself (exit 0), cut
// short it is killed (137).
func ctrdLingerer(name string, secs int) agenttest.CtrdContainer {
	return agenttest.CtrdContainer{Name: name, Command: []string{"sh", "-c", fmt.Sprintf(`trap "sleep %d; exit 0" TERM; while true; do sleep 0.2; done`, secs)}}
}

// containerPID is the host PID of a running container, from the runtime's
// verbose status (containerd's info.pid).
func containerPID(t *testing.T, e *agenttest.CtrdEnv, id string) int {
	t.Helper()
	resp, err := e.RT.ContainerStatus(t.Context(), id, true)
	if err != nil {
		t.Fatalf("ContainerStatus(%s): %v", id, err)
	}
	var info struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(resp.GetInfo()["info"]), &info); err != nil || info.Pid <= 0 {
		t.Fatalf("container %.12s: no pid in the verbose status (%v): %q", id, err, resp.GetInfo()["info"])
	}
	return info.Pid
}

// runningView is what must not change across an agent's restart: each
// running container's ID, PID and restart count, and the pod's status as
// GET /pods lists it.
type runningView struct {
	ids      map[string]string // container name: ID
	pids     map[string]int
	restarts map[string]int32
	status   v1.PodStatus
}

func viewOf(t *testing.T, e *agenttest.CtrdEnv, a *agenttest.CtrdAgent, uid string) runningView {
	t.Helper()
	v := runningView{ids: e.RunningContainers(uid), pids: map[string]int{}, restarts: map[string]int32{}}
	for name, id := range v.ids {
		v.pids[name] = containerPID(t, e, id)
	}
	p, _ := a.Pod(uid)
	for _, c := range p.Containers {
		v.restarts[c.Name] = c.Restarts
	}
	v.status, _ = a.PodStatus(types.UID(uid))
	return v
}

// sameStatus compares what a restart must keep of a pod's status: the
// phase, IPs, start time, conditions' types and values, and each
// container's ID, restart count, readiness and running state's start.
func sameStatus(a, b v1.PodStatus) string {
	var diffs []string
	if a.Phase != b.Phase || a.PodIP != b.PodIP || !a.StartTime.Equal(b.StartTime) {
		diffs = append(diffs, fmt.Sprintf("phase/IP/start %s %s %v -> %s %s %v", a.Phase, a.PodIP, a.StartTime, b.Phase, b.PodIP, b.StartTime))
	}
	conds := func(s v1.PodStatus) string {
		var out []string
		for _, c := range s.Conditions {
			out = append(out, string(c.Type)+"="+string(c.Status))
		}
		return strings.Join(out, ",")
	}
	if conds(a) != conds(b) {
		diffs = append(diffs, "conditions "+conds(a)+" -> "+conds(b))
	}
	ctrs := func(s v1.PodStatus) string {
		var out []string
		for _, c := range s.ContainerStatuses {
			started := ""
			if c.State.Running != nil {
				started = c.State.Running.StartedAt.UTC().String()
			}
			out = append(out, fmt.Sprintf("%s:%s:%d:%v:%s", c.Name, c.ContainerID, c.RestartCount, c.Ready, started))
		}
		return strings.Join(out, ",")
	}
	if ctrs(a) != ctrs(b) {
		diffs = append(diffs, "containers "+ctrs(a)+" -> "+ctrs(b))
	}
	return strings.Join(diffs, "; ")
}

// TestContainerdRestartKeepsPodsRunning is the restart acceptance of
// issue 21: an agent stopped as SIGTERM stops it (`systemctl restart`:
// runAgent's context ends, as here) leaves every container running with
// its PID and restart count, and its sandboxes ready; the next agent
// adopts them and reports the same statuses, restarting nothing. A pod
// whose manifest was removed while no agent ran is stopped within its
// grace period: its container, which needs 3 s after SIGTERM, exits 0,
// where the kubelet's 1 s override for such a pod would kill it.
func TestContainerdRestartKeepsPodsRunning(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	web := agenttest.CtrdPod{Name: "web", UID: e.NewUID(), Grace: 30, Containers: []agenttest.CtrdContainer{agenttest.CtrdTrapper("main"), agenttest.CtrdIgnorer("side")}}
	restarted := agenttest.CtrdPod{Name: "restarted", UID: e.NewUID(), Grace: 30, Containers: []agenttest.CtrdContainer{agenttest.CtrdIgnorer("main")}}
	gone := agenttest.CtrdPod{Name: "gone", UID: e.NewUID(), Grace: 20, Containers: []agenttest.CtrdContainer{ctrdLingerer("lingerer", 3)}}

	a := e.StartAgent(manifests, nil)
	for _, p := range []agenttest.CtrdPod{web, restarted, gone} {
		a.WritePod(p)
	}
	a.WaitRunning(web.UID, 2)
	a.WaitRunning(gone.UID, 1)
	a.WaitRunning(restarted.UID, 1)
	// One restart, out of the agent's hands: the runtime kills the
	// container, the agent starts a new one.
	first := e.RunningContainers(restarted.UID)["main"]
	if err := e.RT.StopContainer(t.Context(), first, 0); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	a.WaitPod(restarted.UID, "restarted runs again after 1 restart", func(p api.PodInfo) bool {
		return agenttest.IsRunning(p) && p.Containers[0].Restarts == 1
	})
	a.WaitSignalsSet(web)
	a.WaitSignalsSet(restarted)
	before := map[string]runningView{}
	for _, p := range []agenttest.CtrdPod{web, restarted} {
		uid := p.UID
		agenttest.CtrdEventually(t, p.Name+" ready", func() (bool, string) {
			st, _ := a.PodStatus(types.UID(uid))
			for _, c := range st.Conditions {
				if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%+v", st.Conditions)
		})
		before[uid] = viewOf(t, e, a, uid)
	}

	if err := a.Stop(); err != nil {
		t.Fatalf("agent A: Run = %v, want nil", err)
	}
	if lines := a.Logs.Lines("node shutdown"); len(lines) != 0 {
		t.Errorf("agent A's stop ran a node shutdown: %q", lines)
	}
	for _, p := range []agenttest.CtrdPod{web, restarted, gone} {
		for _, sb := range e.Sandboxes(p.UID) {
			if sb.State != runtimeapi.PodSandboxState_SANDBOX_READY {
				t.Errorf("after agent A stopped, %s's sandbox %.12s is %v, want ready", p.Name, sb.Id, sb.State)
			}
		}
	}
	for _, p := range []agenttest.CtrdPod{web, restarted} {
		if got := e.RunningContainers(p.UID); fmt.Sprint(got) != fmt.Sprint(before[p.UID].ids) {
			t.Errorf("after agent A stopped, %s runs %v, want %v", p.Name, got, before[p.UID].ids)
		}
	}
	a.RemovePod(gone) // deleted while no agent runs
	goneContainer := e.RunningContainers(gone.UID)["lingerer"]

	b := e.StartAgent(manifests, nil)
	w := e.Watch(gone.UID, b.Obs.Poke(), "lingerer")
	for _, p := range []agenttest.CtrdPod{web, restarted} {
		uid, want := p.UID, before[p.UID]
		b.WaitPod(uid, p.Name+" adopted with the same status", func(api.PodInfo) bool {
			st, ok := b.PodStatus(types.UID(uid))
			return ok && sameStatus(want.status, st) == ""
		})
	}
	b.WaitGone(gone.UID)
	if st := w.ExitedOrGone("lingerer"); st != nil && st.GetExitCode() != 0 {
		t.Errorf("gone's container %.12s exited %d, want 0: stopped within its 20 s grace, it ends by itself 3 s after SIGTERM", goneContainer, st.GetExitCode())
	}
	b.WaitHousekeepings(3) // a restart, if any, would show by now
	for _, p := range []agenttest.CtrdPod{web, restarted} {
		now, want := viewOf(t, e, b, p.UID), before[p.UID]
		if fmt.Sprint(now.ids) != fmt.Sprint(want.ids) || fmt.Sprint(now.pids) != fmt.Sprint(want.pids) {
			t.Errorf("%s: containers %v PIDs %v after the restart, want %v %v", p.Name, now.ids, now.pids, want.ids, want.pids)
		}
		if fmt.Sprint(now.restarts) != fmt.Sprint(want.restarts) {
			t.Errorf("%s: restart counts %v after the restart, want %v", p.Name, now.restarts, want.restarts)
		}
		if d := sameStatus(want.status, now.status); d != "" {
			t.Errorf("%s: status changed across the restart: %s", p.Name, d)
		}
		if b.Obs.Reached(p.UID, fsm.TerminationRequested) || b.Obs.Reached(p.UID, fsm.Terminating) {
			t.Errorf("%s: agent B asked for its termination: %v", p.Name, b.Obs.Events(p.UID))
		}
	}
	if got := before[restarted.UID].restarts["main"]; got != 1 {
		t.Errorf("restarted's restart count before the restart = %d, want 1", got)
	}
	e.WaitRuntimeGone(gone.UID)
}

// TestContainerdKillFinishedByNextAgent: no lost kill. The agent was
// stopping a pod (its manifest removed; the container ignores SIGTERM and
// waits for SIGKILL at the end of the grace period) when it was stopped
// itself; the next agent finishes the kill: the container is killed, the
// sandbox stopped and the pod removed.
func TestContainerdKillFinishedByNextAgent(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	pod := agenttest.CtrdPod{Name: "stopping", UID: e.NewUID(), Grace: 4, Containers: []agenttest.CtrdContainer{agenttest.CtrdIgnorer("ignorer")}}
	a := e.StartAgent(manifests, nil)
	a.WritePod(pod)
	a.WaitRunning(pod.UID, 1)
	a.RemovePod(pod)
	agenttest.CtrdEventually(t, "agent A is stopping the pod", func() (bool, string) {
		return a.Obs.Reached(pod.UID, fsm.Terminating), fmt.Sprint(a.Obs.Events(pod.UID))
	})
	if err := a.Stop(); err != nil {
		t.Fatalf("agent A: Run = %v, want nil", err)
	}

	b := e.StartAgent(manifests, nil)
	w := e.Watch(pod.UID, b.Obs.Poke(), "ignorer")
	b.WaitGone(pod.UID)
	if st := w.ExitedOrGone("ignorer"); st != nil && st.GetExitCode() != 137 {
		t.Errorf("the ignorer exited %d, want 137 (SIGKILL at the end of the grace period)", st.GetExitCode())
	}
	agenttest.CtrdEventually(t, "nothing of the pod runs", func() (bool, string) {
		for _, sb := range e.Sandboxes(pod.UID) {
			if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
				return false, "sandbox " + sb.Id[:12] + " ready"
			}
		}
		running := e.RunningContainers(pod.UID)
		return len(running) == 0, fmt.Sprint(running)
	})
	e.WaitRuntimeGone(pod.UID)
}

// TestContainerdClusterPodDeletedWhileAgentDown: in a cluster, a pod
// deleted through the API while its node's agent is down stays, with its
// deletion timestamp, until the node confirms; the next agent finds it so
// and stops it with the deletion's grace period, as the kubelet does
// (pod.DeletionGracePeriodSeconds, not what remains of it): its container,
// which needs 3 s after SIGTERM, exits 0; then the object is deleted.
func TestContainerdClusterPodDeletedWhileAgentDown(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	a := joinContainerd(e, n)
	pod := n.create(n.busyboxPod("deleted-while-down", 600, ctrdLingerer("lingerer", 3)))
	uid := string(pod.UID)
	e.RemoveAtEnd(uid)
	n.waitPhase("deleted-while-down", v1.PodRunning)
	time.Sleep(300 * time.Millisecond) // the trap is set
	if err := a.Stop(); err != nil {
		t.Fatalf("agent A: Run = %v", err)
	}
	running := e.RunningContainers(uid)["lingerer"]
	grace := int64(20)
	if err := n.c.Admin.CoreV1().Pods(n.ns).Delete(context.Background(), "deleted-while-down", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	b := joinContainerd(e, n)
	w := e.Watch(uid, b.Obs.Poke(), "lingerer")
	n.waitDeleted("deleted-while-down")
	if !b.Obs.SawGrace(uid, grace) {
		t.Errorf("agent B's engine was not given the deletion's %d s: %v", grace, b.Obs.Events(uid))
	}
	if st := w.ExitedOrGone("lingerer"); st != nil && st.GetExitCode() != 0 {
		t.Errorf("the container %.12s exited %d, want 0: stopped within the deletion's %d s, it ends by itself 3 s after SIGTERM", running, st.GetExitCode(), grace)
	}
	if b.Obs.Reached(uid, fsm.Running) {
		t.Errorf("agent B's engine ran a pod being deleted: %v", b.Obs.Events(uid))
	}
	e.WaitRuntimeGone(uid)
}
